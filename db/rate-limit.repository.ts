import type { EntityManager } from '@mikro-orm/core';

export interface RateWindow {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
  exceeded: boolean;
}

/**
 * Counts one request in the bucket's current one-minute window with a single atomic upsert, so
 * every API process sharing the database shares the counter.
 */
export async function hitRateLimit(em: EntityManager, bucket: string, limit: number, nowMs = Date.now()): Promise<RateWindow> {
  const windowStart = Math.floor(nowMs / 60_000) * 60;
  const rows = (await em.getConnection().execute(
    `insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 1)
     on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
     returning count`,
    [bucket, windowStart],
    'all',
  )) as { count: number | string }[];
  const count = Number(rows[0]?.count ?? 1);
  return { limit, remaining: Math.max(0, limit - count), reset: windowStart + 60, exceeded: count > limit };
}

/** Drops windows older than the current one. */
export async function pruneRateLimits(em: EntityManager, nowMs = Date.now()): Promise<void> {
  const current = Math.floor(nowMs / 60_000) * 60;
  await em.getConnection().execute('delete from rate_limit_counters where window_start < ?', [current - 60], 'run');
}
