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

/** One bucket's one-minute window as this process knows it. */
interface Window {
  bucket: string;
  windowStart: number;
  /** The window's count in the database (every process's hits) when this process last wrote it. */
  stored: number;
  /** This process's hits since, not yet in a finished write (the one on its way included). */
  unwritten: number;
  /** Whether a write of this window has come back: until then `stored` is not known. */
  known: boolean;
  /** Hits that wait for the window's first write, to be answered with what the database holds. */
  waiters: { count: number; resolve: (total: number) => void }[];
}

// The windows of each database connection (one ORM, one database), and whether a write is due.
interface Counter {
  windows: Map<string, Window>;
  /** A write is on its way. */
  writing: boolean;
  /** The next write, while one is set to start: at once (`now`) or after hits gather. */
  next?: { now: boolean; cancel: () => void };
  /** When a write failed for a dependency's fault: the next one waits a little. */
  failedAt: number;
}
const counters = new WeakMap<object, Counter>();
/** Keeps one upsert's bound values (3 per window) well inside what SQLite and PostgreSQL take. */
const MAX_WINDOWS_PER_WRITE = 1_000;
/** How long the hits of a busy process gather before they are written together. */
const WRITE_EVERY_MS = 25;
/** How long a database that refused a write is left alone. */
const RETRY_AFTER_FAULT_MS = 1_000;

/**
 * Counts `count` requests (one by default; each message of an MCP batch is one) in the bucket's
 * current one-minute window; `total` is the window's count with these included, every API process
 * sharing the database counted. The first hit of a window in this process waits for its write, an
 * atomic upsert, and learns what the other processes counted; later hits are answered from this
 * process's count on top of that, at once, and written together in the background (every 25 ms
 * while hits come), so a request never waits for the database's writers. Another process's hits
 * are seen one write later: the count may overshoot by what the others admitted in that time.
 */
export async function hitRateLimit(em: EntityManager, bucket: string, limit: number, nowMs = Date.now(), count = 1): Promise<RateWindow & { total: number }> {
  const windowStart = Math.floor(nowMs / 60_000) * 60;
  const counter = counterOf(em);
  const key = `${windowStart}:${bucket}`;
  let w = counter.windows.get(key);
  if (!w) {
    // while the database refuses writes, a new window is counted from nothing rather than waited for
    w = { bucket, windowStart, stored: 0, unwritten: 0, known: Date.now() - counter.failedAt < RETRY_AFTER_FAULT_MS, waiters: [] };
    counter.windows.set(key, w);
  }
  w.unwritten += count;
  scheduleWrite(em, counter, w.known ? undefined : 0);
  const total = w.known ? w.stored + w.unwritten : await new Promise<number>((resolve) => w.waiters.push({ count, resolve }));
  return { limit, remaining: Math.max(0, limit - total), reset: windowStart + 60, exceeded: total > limit, total };
}

/** Resolves once every hit counted so far on this database is written (or its write failed). */
export async function rateLimitsWritten(em: EntityManager): Promise<void> {
  const counter = counterOf(em);
  const since = Date.now();
  while ((counter.writing || [...counter.windows.values()].some((w) => w.unwritten > 0)) && counter.failedAt < since) {
    scheduleWrite(em, counter, 0);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function counterOf(em: EntityManager): Counter {
  const conn = em.getConnection();
  let counter = counters.get(conn);
  if (!counter) {
    counter = { windows: new Map(), writing: false, failedAt: 0 };
    counters.set(conn, counter);
  }
  return counter;
}

/**
 * Starts the next write unless one is on its way, after `delayMs`: by default a busy process's hits
 * gather for a moment first, and a database that refused the last write is left alone for a while.
 * A window no write has come back for yet is written at once (0), since its hits wait for it.
 */
function scheduleWrite(em: EntityManager, counter: Counter, delayMs?: number): void {
  if (counter.writing) return;
  const sinceFault = Date.now() - counter.failedAt;
  const wait = delayMs ?? (sinceFault < RETRY_AFTER_FAULT_MS ? RETRY_AFTER_FAULT_MS - sinceFault : WRITE_EVERY_MS);
  if (counter.next) {
    if (wait > 0 || counter.next.now) return;
    counter.next.cancel();
  }
  const write = () => {
    counter.next = undefined;
    counter.writing = true;
    void writeWindows(em, counter).finally(() => {
      counter.writing = false;
      if ([...counter.windows.values()].some((w) => w.unwritten > 0)) scheduleWrite(em, counter);
    });
  };
  if (wait === 0) {
    const immediate = setImmediate(write);
    counter.next = { now: true, cancel: () => clearImmediate(immediate) };
  } else {
    const timer = setTimeout(write, wait).unref();
    counter.next = { now: false, cancel: () => clearTimeout(timer) };
  }
}

/** Writes what each window gathered, one upsert for all of them, and forgets the past minutes' windows. */
async function writeWindows(em: EntityManager, counter: Counter): Promise<void> {
  const due = [...counter.windows.values()].filter((w) => w.unwritten > 0);
  // rows in one order in every process: two upserts locking the same rows cannot deadlock
  const rows = due
    .sort((a, b) => a.windowStart - b.windowStart || (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0))
    .slice(0, MAX_WINDOWS_PER_WRITE)
    .map((w) => ({ w, count: w.unwritten }));
  if (rows.length > 0) {
    try {
      const counted = (await em.getConnection().execute(
        `insert into rate_limit_counters (bucket, window_start, count) values ${rows.map(() => '(?, ?, ?)').join(', ')}
         on conflict (bucket, window_start) do update set count = rate_limit_counters.count + excluded.count
         returning bucket, window_start, count`,
        rows.flatMap((r) => [r.w.bucket, r.w.windowStart, r.count]),
        'all',
      )) as { bucket: string; window_start: number | string; count: number | string }[];
      const stored = new Map(counted.map((c) => [`${Number(c.window_start)}:${c.bucket}`, Number(c.count)]));
      if (counter.failedAt !== 0) log.info('rate-limit windows are written to the database again');
      counter.failedAt = 0;
      for (const { w, count } of rows) {
        w.unwritten -= count;
        w.stored = stored.get(`${w.windowStart}:${w.bucket}`) ?? w.stored + count;
        if (!w.known) answerWaiters(w, w.stored - count);
      }
    } catch (err) {
      // a database that cannot take the write (a full disk, a restart) must not turn every request into
      // an error: this process counts alone, its hits kept for the next write, until it can write again
      // said once, when the writes begin to fail
      if (counter.failedAt === 0) {
        const message = err instanceof Error ? err.message : String(err);
        if (dependencyFault(err)) log.warn({ err: message }, 'rate-limit windows could not be written; counting them in this process until the database takes writes again');
        else log.error({ err: message }, 'rate-limit windows could not be written; counting them in this process');
      }
      counter.failedAt = Date.now();
      for (const { w } of rows) if (!w.known) answerWaiters(w, w.stored);
    }
  }
  const current = Math.floor(Date.now() / 60_000) * 60;
  for (const [key, w] of counter.windows) if (w.windowStart < current && w.unwritten === 0) counter.windows.delete(key);
}

/** The window's first write came back (or failed): its waiters' totals, in order of arrival, from `before`. */
function answerWaiters(w: Window, before: number): void {
  w.known = true;
  let total = before;
  for (const waiter of w.waiters.splice(0)) waiter.resolve((total += waiter.count));
}

/** Drops windows older than the current one. */
export async function pruneRateLimits(em: EntityManager, nowMs = Date.now()): Promise<void> {
  const current = Math.floor(nowMs / 60_000) * 60;
  await em.getConnection().execute('delete from rate_limit_counters where window_start < ?', [current - 60], 'run');
}
