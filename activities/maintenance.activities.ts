import type { MikroORM } from '@mikro-orm/core';
import { Job } from '../db/job.entity';
import { pruneRateLimits } from '../db/rate-limit.repository';
import type { Storage } from '../engines/storage';

export interface SweepResult {
  filesRemoved: number;
}

/**
 * Deletes output files whose download link has expired (the job row stays; its link answers 410),
 * and drops old rate-limit windows and idempotency records. Safe to run from several processes.
 */
export async function sweep(orm: MikroORM, storage: Storage, now = new Date()): Promise<SweepResult> {
  const em = orm.em.fork();
  const expired = await em.find(Job, { status: 'completed', outputFile: { $ne: null }, expiresAt: { $lt: now } }, { limit: 500 });
  for (const job of expired) {
    await storage.removeOutput(job.id);
    job.outputFile = null;
  }
  await em.flush();
  await pruneRateLimits(em, now.getTime());
  await em.getConnection().execute('delete from idempotency_keys where created_at < ?', [new Date(now.getTime() - 24 * 3600_000)], 'run');
  return { filesRemoved: expired.length };
}

/** Runs sweep() every `everyMs` until the returned stop function is called. */
export function startJanitor(orm: MikroORM, storage: Storage, everyMs = 5 * 60_000, log: (msg: string) => void = console.warn): () => void {
  const tick = () => {
    sweep(orm, storage).catch((err: unknown) => log(`janitor: ${err instanceof Error ? err.message : String(err)}`));
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();
  tick();
  return () => clearInterval(timer);
}
