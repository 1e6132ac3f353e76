import type { EntityManager } from '@mikro-orm/core';
import { dependencyFault } from '../lib/dependency-faults';
import { log } from '../lib/logger';

export interface RateWindow {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
  exceeded: boolean;
}

interface Hit {
  bucket: string;
  windowStart: number;
  count: number;
  resolve: (total: number) => void;
  reject: (err: unknown) => void;
}

// Hits waiting to be written, per database connection: while one upsert is on its way, the hits
// that arrive meanwhile (of any bucket) go to the database together in the next one.
const waiting = new WeakMap<object, Hit[]>();
/** Keeps one upsert's bound values (3 per window) well inside what SQLite and PostgreSQL take. */
const MAX_HITS_PER_WRITE = 1_000;

/**
 * Counts `count` requests (one by default; each message of an MCP batch is one) in the bucket's
 * current one-minute window with an atomic upsert, so every API process sharing the database shares
 * the counter. `total` is the window's count with these included. Concurrent hits in this process
 * share one upsert (SQLite's one connection would otherwise write them one by one, each waiting for
 * the last), and each gets the total as if it had been counted alone, in order of arrival.
 */
export async function hitRateLimit(em: EntityManager, bucket: string, limit: number, nowMs = Date.now(), count = 1): Promise<RateWindow & { total: number }> {
  const windowStart = Math.floor(nowMs / 60_000) * 60;
  const total = await new Promise<number>((resolve, reject) => {
    const conn = em.getConnection();
    const queued = waiting.get(conn);
    const hit = { bucket, windowStart, count, resolve, reject };
    if (queued) return void queued.push(hit);
    waiting.set(conn, [hit]);
    void writeHits(em);
  }).catch((err: unknown) => {
    // a database that cannot take the write (a full disk, a restart) must not turn every request into
    // an error: this process counts alone until it can write again
    if (!dependencyFault(err)) throw err;
    return localHit(bucket, windowStart, count, err);
  });
  return { limit, remaining: Math.max(0, limit - total), reset: windowStart + 60, exceeded: total > limit, total };
}

// Windows counted in this process while the database could not take the writes.
const local = new Map<string, number>();
let localWindow = 0;

function localHit(bucket: string, windowStart: number, count: number, err: unknown): number {
  if (windowStart !== localWindow) {
    local.clear();
    localWindow = windowStart;
    log.warn({ err: err instanceof Error ? err.message : String(err) }, 'rate-limit windows could not be written; counting them in this process until the database takes writes again');
  }
  const total = (local.get(bucket) ?? 0) + count;
  local.set(bucket, total);
  return total;
}

/** Writes the waiting hits, one upsert for all of them, until none are left. */
async function writeHits(em: EntityManager): Promise<void> {
  const conn = em.getConnection();
  for (let queue = waiting.get(conn); queue && queue.length > 0; queue = waiting.get(conn)) {
    const hits = queue.splice(0, MAX_HITS_PER_WRITE);
    const sums = new Map<string, { bucket: string; windowStart: number; count: number }>();
    for (const h of hits) {
      const key = `${h.windowStart}:${h.bucket}`;
      const sum = sums.get(key) ?? { bucket: h.bucket, windowStart: h.windowStart, count: 0 };
      sum.count += h.count;
      sums.set(key, sum);
    }
    // rows in one order in every process: two upserts locking the same rows cannot deadlock
    const rows = [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
    try {
      const counted = (await conn.execute(
        `insert into rate_limit_counters (bucket, window_start, count) values ${rows.map(() => '(?, ?, ?)').join(', ')}
         on conflict (bucket, window_start) do update set count = rate_limit_counters.count + excluded.count
         returning bucket, window_start, count`,
        rows.flatMap((r) => [r.bucket, r.windowStart, r.count]),
        'all',
      )) as { bucket: string; window_start: number | string; count: number | string }[];
      // the count before these hits, per window; each hit adds its own in order of arrival
      const before = new Map(counted.map((c) => [`${Number(c.window_start)}:${c.bucket}`, Number(c.count)]));
      for (const [key, r] of sums) before.set(key, (before.get(key) ?? r.count) - r.count);
      for (const h of hits) {
        const key = `${h.windowStart}:${h.bucket}`;
        const total = before.get(key)! + h.count;
        before.set(key, total);
        h.resolve(total);
      }
    } catch (err) {
      for (const h of hits) h.reject(err);
    }
  }
  waiting.delete(conn);
}

/** Drops windows older than the current one. */
export async function pruneRateLimits(em: EntityManager, nowMs = Date.now()): Promise<void> {
  const current = Math.floor(nowMs / 60_000) * 60;
  await em.getConnection().execute('delete from rate_limit_counters where window_start < ?', [current - 60], 'run');
}
