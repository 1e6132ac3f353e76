import type { MikroORM } from '@mikro-orm/core';
import { Job } from './entity';
import { claimRunningSlot, failJobWithRefund, jobAccountPlan, jobsDueASlot, type SlotClaim } from './repository';
import type { Storage } from '../engines/storage';
import type { Config } from '../lib/config';
import { JobFailure, type StoredFailureKind } from '../lib/job-failure';
import type { JobEnd } from './types';
import type { JobOutput } from '../lib/job-reports';
import { describeOutputs } from './outputs';
import { refundJob } from '../credits/repository';
import { log } from '../lib/logger';
import { PLANS } from '../lib/plans';
import { creditsRefunded, jobDuration, jobsCompleted, jobsFailed } from '../lib/metrics';

export interface JobLifecycleDeps {
  orm: MikroORM;
  storage: Storage;
  config: Pick<Config, 'downloadUrlTtlMinutes'>;
}

/** Database, credit and storage activities for the `control` queue. Each is idempotent: Temporal may retry it. */
export function createJobLifecycleActivities(deps: JobLifecycleDeps) {
  const { orm, storage, config } = deps;

  async function loadJob(jobId: string) {
    const em = orm.em.fork();
    const job = await em.findOne(Job, jobId);
    if (!job) throw JobFailure.internal(`job ${jobId} does not exist`, 'JobMissing');
    return { em, job };
  }

  return {
    /** Takes one of the account's running slots for a pending job, in the account's order; 'waiting' when none is free yet. */
    async claimRunningSlot(jobId: string): Promise<SlotClaim> {
      // the plan is read now: a plan change applies to the next claim
      const owner = await jobAccountPlan(orm.em, jobId);
      if (!owner) throw JobFailure.internal(`job ${jobId} does not exist`, 'JobMissing');
      const { claim, jobType } = await claimRunningSlot(orm.em.fork(), jobId, owner.accountId, PLANS[owner.plan].maxRunningJobs);
      if (claim === 'claimed') log.info({ job_id: jobId, job_type: jobType, account_id: owner.accountId, status: 'processing' }, 'job processing');
      return claim;
    },

    /** The jobs of this job's account that a freed slot lets run now (oldest first). */
    async jobsDueASlot(jobId: string): Promise<string[]> {
      const owner = await jobAccountPlan(orm.em, jobId);
      if (!owner) return [];
      return jobsDueASlot(orm.em.fork(), owner.accountId, PLANS[owner.plan].maxRunningJobs);
    },

    async markProcessing(jobId: string): Promise<void> {
      const { em, job } = await loadJob(jobId);
      if (job.status !== 'pending') return;
      job.status = 'processing';
      job.startedAt = new Date();
      job.progress = 0;
      await em.flush();
      log.info({ job_id: job.id, job_type: job.jobType, account_id: job.accountId, status: 'processing' }, 'job processing');
    },

    async completeJob(input: { jobId: string; output: JobOutput }): Promise<JobEnd> {
      const { em, job } = await loadJob(input.jobId);
      if (job.status === 'completed' || job.status === 'failed') {
        // a retry after the commit: the work objects may still be there (the bucket failed after the row was written)
        if (job.status === 'completed') await storage.removeJobWork(job.id);
        return { jobId: job.id, status: job.status };
      }
      const now = new Date();
      job.status = 'completed';
      job.progress = 100;
      job.outputFile = input.output.outputFile;
      job.outputFiles = await describeOutputs(storage, [input.output.outputFile, ...(input.output.moreFiles ?? [])]);
      job.resultData = input.output.resultData;
      job.completedAt = now;
      job.expiresAt = new Date(now.getTime() + config.downloadUrlTtlMinutes * 60_000);
      job.errorMessage = null;
      const unused = Math.min(Math.max(0, Math.floor(input.output.creditsUnused ?? 0)), job.creditsCharged);
      if (unused > 0) {
        // what the job did not need goes back with the row that says it completed: a retry finds it completed and refunds nothing
        await em.begin();
        try {
          if (await refundJob(em, job.accountId, job.id, unused, 'not needed by the job')) job.creditsCharged -= unused;
          await em.flush();
          await em.commit();
        } catch (err) {
          await em.rollback();
          throw err;
        }
      } else {
        await em.flush();
      }
      const seconds = (now.getTime() - job.createdAt.getTime()) / 1000;
      jobsCompleted.inc({ type: job.jobType });
      jobDuration.observe({ type: job.jobType, status: 'completed' }, seconds);
      log.info({ job_id: job.id, job_type: job.jobType, account_id: job.accountId, status: 'completed', seconds }, 'job completed');
      await storage.removeJobWork(job.id);
      return { jobId: job.id, status: 'completed' };
    },

    /** Marks the job failed and refunds its charge in one transaction; a second call changes nothing. */
    async failJob(input: { jobId: string; errorMessage: string; /** absent in histories recorded before it was */ failureKind?: StoredFailureKind }): Promise<JobEnd> {
      const outcome = await failJobWithRefund(orm.em.fork(), input.jobId, input.errorMessage, input.failureKind ?? null);
      if (!outcome.found) throw JobFailure.internal(`job ${input.jobId} does not exist`, 'JobMissing');
      const { job } = outcome;
      // counted once: a retried failJob finds the job already failed
      if (outcome.status === 'failed' && outcome.changed) {
        const seconds = ((job.completedAt ?? new Date()).getTime() - job.createdAt.getTime()) / 1000;
        jobsFailed.inc({ type: job.jobType, kind: job.failureKind ?? 'unknown' });
        jobDuration.observe({ type: job.jobType, status: 'failed' }, seconds);
        if (outcome.refunded) creditsRefunded.inc({ for: job.jobType }, job.creditsCharged);
        log.info({ job_id: job.id, job_type: job.jobType, account_id: job.accountId, status: 'failed', error_message: job.errorMessage, failure_kind: job.failureKind, refunded: job.creditsCharged, seconds }, 'job failed');
      }
      await storage.removeJobWork(input.jobId);
      if (outcome.status === 'failed') await storage.removeOutput(input.jobId);
      return { jobId: input.jobId, status: outcome.status };
    },
  };
}

export type JobLifecycleActivities = ReturnType<typeof createJobLifecycleActivities>;
