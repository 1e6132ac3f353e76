import type { MikroORM } from '@mikro-orm/core';
import { Account } from '../accounts/entity';
import { Upload } from '../uploads/entity';
import { grantMonthlyAllowances } from '../credits/repository';
import { jobInputOf, pendingJobsSince, removeExpiredOutputs } from './repository';
import { pruneRateLimits } from '../db/rate-limit.repository';
import type { Storage } from '../engines/storage';
import type { MediaJobInput } from './types';

export interface SweepResult {
  filesRemoved: number;
  uploadsRemoved: number;
}

/**
 * Deletes output files whose download link has expired (the job row stays; its link answers 410)
 * and expired uploads (row and file),
 * and drops old rate-limit windows and idempotency records. Safe to run from several processes.
 */
export async function sweep(orm: MikroORM, storage: Storage, now = new Date()): Promise<SweepResult> {
  const em = orm.em.fork();
  const filesRemoved = await removeExpiredOutputs(em, storage, now);
  const uploads = await em.find(Upload, { expiresAt: { $lt: now } }, { limit: 500 });
  for (const upload of uploads) {
    await storage.removeUpload(upload.id);
    em.remove(upload);
  }
  await em.flush();
  await storage.removeAbandonedUploads(new Date(now.getTime() - 24 * 3600_000));
  await pruneRateLimits(em, now.getTime());
  await em.getConnection().execute('delete from idempotency_keys where created_at < ?', [new Date(now.getTime() - 24 * 3600_000)], 'run');
  return { filesRemoved, uploadsRemoved: uploads.length };
}

export interface MaintenanceDeps {
  orm: MikroORM;
  storage: Storage;
  /** Starts a job's workflow if it does not exist yet (idempotent by workflow id); true when it started one. */
  startJob?: (input: MediaJobInput) => Promise<boolean>;
}

/** Housekeeping for the `control` queue, run by Temporal Schedules (workers/schedules.ts): one runner however many processes. */
export function createMaintenanceActivities(deps: MaintenanceDeps) {
  const { orm, storage } = deps;
  return {
    /**
     * The outbox's safety net: starts the workflow of every job still pending after `olderThanSeconds`
     * (its API process may have died between the commit and the start). Starting an existing
     * workflow is a no-op, so a job whose workflow merely has not reached its first step is unharmed.
     */
    async startStrandedJobs(input: { olderThanSeconds: number }): Promise<{ checked: number; started: number }> {
      if (!deps.startJob) throw new Error('startStrandedJobs needs a Temporal client');
      const em = orm.em.fork();
      const jobs = await pendingJobsSince(em, new Date(Date.now() - input.olderThanSeconds * 1000), 500);
      // each job runs under its account's plan (its source limits), as when the API starts it
      const accounts = jobs.length ? await em.find(Account, { id: { $in: [...new Set(jobs.map((j) => j.accountId))] } }) : [];
      const planOf = new Map(accounts.map((a) => [a.id, a.plan]));
      let started = 0;
      for (const job of jobs) if (await deps.startJob(jobInputOf(job, planOf.get(job.accountId)))) started++;
      return { checked: jobs.length, started };
    },

    /** Tops every account up to its plan's monthly allowance, once per calendar month. */
    async grantMonthlyCredits(): Promise<{ granted: number }> {
      return { granted: await grantMonthlyAllowances(orm.em.fork()) };
    },

    /** Removes expired outputs and uploads, and old rate-limit and idempotency records. */
    async sweepExpiredOutputs(): Promise<SweepResult> {
      return sweep(orm, storage);
    },
  };
}
