import { ApplicationFailure } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/core';
import { refundJob } from '../db/credits';
import { Job } from '../db/job.entity';
import type { Config } from '../lib/config';
import type { JobEnd, JobOutput } from '../lib/job.types';
import type { Storage } from '../lib/storage';

export interface ControlDeps {
  orm: MikroORM;
  storage: Storage;
  config: Pick<Config, 'downloadUrlTtlMinutes'>;
}

/** Database, credit and storage activities for the `control` queue. Each is idempotent: Temporal may retry it. */
export function createControlActivities(deps: ControlDeps) {
  const { orm, storage, config } = deps;

  async function loadJob(jobId: string) {
    const em = orm.em.fork();
    const job = await em.findOne(Job, jobId);
    if (!job) throw ApplicationFailure.nonRetryable(`job ${jobId} does not exist`, 'JobMissing');
    return { em, job };
  }

  return {
    async markProcessing(jobId: string): Promise<void> {
      const { em, job } = await loadJob(jobId);
      if (job.status !== 'pending') return;
      job.status = 'processing';
      job.startedAt = new Date();
      job.progress = 0;
      await em.flush();
    },

    async completeJob(input: { jobId: string; output: JobOutput }): Promise<JobEnd> {
      const { em, job } = await loadJob(input.jobId);
      if (job.status === 'completed' || job.status === 'failed') return { jobId: job.id, status: job.status };
      const now = new Date();
      job.status = 'completed';
      job.progress = 100;
      job.outputFile = input.output.outputFile;
      job.resultData = input.output.resultData;
      job.completedAt = now;
      job.expiresAt = new Date(now.getTime() + config.downloadUrlTtlMinutes * 60_000);
      job.errorMessage = null;
      await em.flush();
      await storage.removeWorkDir(job.id);
      return { jobId: job.id, status: 'completed' };
    },

    /** Marks the job failed and refunds its charge in one transaction; a second call changes nothing. */
    async failJob(input: { jobId: string; errorMessage: string }): Promise<JobEnd> {
      const em = orm.em.fork();
      const end = await em.transactional(async (tx) => {
        const job = await tx.findOne(Job, input.jobId);
        if (!job) throw ApplicationFailure.nonRetryable(`job ${input.jobId} does not exist`, 'JobMissing');
        if (job.status === 'completed') return { jobId: job.id, status: 'completed' as const };
        if (job.status !== 'failed') {
          job.status = 'failed';
          job.progress = null;
          job.errorMessage = input.errorMessage;
          job.completedAt = new Date();
          await tx.flush();
        }
        await refundJob(tx, job.accountId, job.id, job.creditsCharged);
        return { jobId: job.id, status: 'failed' as const };
      });
      await storage.removeWorkDir(input.jobId);
      await storage.removeOutput(input.jobId);
      return end;
    },
  };
}

export type ControlActivities = ReturnType<typeof createControlActivities>;
