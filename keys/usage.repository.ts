// Key usage (`last_used_at` and requests per UTC day) is buffered in memory and written in one
// transaction every KEY_USAGE_FLUSH_MS and on shutdown, instead of two writes per request.
import type { EntityManager } from '@mikro-orm/core';
import { log } from '../lib/logger';

/** How often buffered key usage reaches the database. */
export const KEY_USAGE_FLUSH_MS = 2_000;

interface Pending {
  lastUsedAt: Date;
  /** Requests per UTC day (`YYYY-MM-DD`). */
  days: Map<string, number>;
}

class KeyUsageBuffer {
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly em: EntityManager) {}

  record(keyId: string, now: Date): void {
    const p = this.pending.get(keyId) ?? { lastUsedAt: now, days: new Map<string, number>() };
    if (now > p.lastUsedAt) p.lastUsedAt = now;
    const day = now.toISOString().slice(0, 10);
    p.days.set(day, (p.days.get(day) ?? 0) + 1);
    this.pending.set(keyId, p);
    // unref: a buffer must never keep a process alive; shutdown flushes explicitly
    this.timer ??= setInterval(() => void this.flush().catch((err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'key usage not written yet')), KEY_USAGE_FLUSH_MS).unref();
  }

  forget(keyId: string): void {
    this.pending.delete(keyId);
  }

  /** Writes everything buffered so far; flushes run one after another. */
  flush(): Promise<void> {
    this.flushing = this.flushing.catch(() => undefined).then(() => this.write());
    return this.flushing;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.em.fork().transactional(async (tx) => {
        const conn = tx.getConnection();
        for (const [keyId, p] of batch) {
          await conn.execute('update api_keys set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)', [p.lastUsedAt, keyId, p.lastUsedAt], 'run', tx.getTransactionContext());
          for (const [day, n] of p.days) {
            await conn.execute(
              `insert into api_key_usage (key_id, day, request_count) values (?, ?, ?)
               on conflict (key_id, day) do update set request_count = api_key_usage.request_count + excluded.request_count`,
              [keyId, day, n],
              'run',
              tx.getTransactionContext(),
            );
          }
        }
      });
    } catch (err) {
      // keep the counts for the next flush (merged with what arrived meanwhile)
      for (const [keyId, p] of batch) {
        const cur = this.pending.get(keyId);
        if (!cur) {
          this.pending.set(keyId, p);
          continue;
        }
        if (p.lastUsedAt > cur.lastUsedAt) cur.lastUsedAt = p.lastUsedAt;
        for (const [day, n] of p.days) cur.days.set(day, (cur.days.get(day) ?? 0) + n);
      }
      throw err;
    }
  }
}

// One buffer per database: every fork of an ORM shares its driver.
const buffers = new WeakMap<object, KeyUsageBuffer>();

function bufferOf(em: EntityManager, create: true): KeyUsageBuffer;
function bufferOf(em: EntityManager, create: false): KeyUsageBuffer | undefined;
function bufferOf(em: EntityManager, create: boolean): KeyUsageBuffer | undefined {
  const driver = em.getDriver();
  let buf = buffers.get(driver);
  if (!buf && create) {
    buf = new KeyUsageBuffer(em.fork());
    buffers.set(driver, buf);
  }
  return buf;
}

/** Counts one request of the key today and moves its last_used_at; written within KEY_USAGE_FLUSH_MS. */
export function recordKeyUsage(em: EntityManager, keyId: string, now = new Date()): void {
  bufferOf(em, true).record(keyId, now);
}

/** Writes this process's buffered key usage now (before reading usage, and on shutdown). */
export async function flushKeyUsage(em: EntityManager): Promise<void> {
  await bufferOf(em, false)?.flush();
}

/** Drops a deleted key's buffered usage. */
export function forgetKeyUsage(em: EntityManager, keyId: string): void {
  bufferOf(em, false)?.forget(keyId);
}

/** Flushes and stops the periodic writer (before the ORM closes). */
export async function closeKeyUsage(em: EntityManager): Promise<void> {
  const buf = bufferOf(em, false);
  if (!buf) return;
  buf.stop();
  await buf.flush();
}
