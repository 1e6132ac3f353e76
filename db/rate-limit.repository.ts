import type { EntityManager } from '@mikro-orm/core';

export interface RateWindow {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
  exceeded: boolean;
}

/**
 * Counts `count` requests (one by default; each message of an MCP batch is one) in the bucket's
 * current one-minute window with a single atomic upsert, so every API process sharing the database
 * shares the counter. `total` is the window's count with these included.
 */
export async function hitRateLimit(em: EntityManager, bucket: string, limit: number, nowMs = Date.now(), count = 1): Promise<RateWindow & { total: number }> {
  const windowStart = Math.floor(nowMs / 60_000) * 60;
  const rows = (await em.getConnection().execute(
    `insert into rate_limit_counters (bucket, window_start, count) values (?, ?, ?)
     on conflict (bucket, window_start) do update set count = rate_limit_counters.count + ?
     returning count`,
    [bucket, windowStart, count, count],
    'all',
  )) as { count: number | string }[];
  const total = Number(rows[0]?.count ?? count);
  return { limit, remaining: Math.max(0, limit - total), reset: windowStart + 60, exceeded: total > limit, total };
}

/** Drops windows older than the current one. */
export async function pruneRateLimits(em: EntityManager, nowMs = Date.now()): Promise<void> {
  const current = Math.floor(nowMs / 60_000) * 60;
  await em.getConnection().execute('delete from rate_limit_counters where window_start < ?', [current - 60], 'run');
}
