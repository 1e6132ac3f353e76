// Queries and state changes of job rows. Every state change a job can make outside its workflow's
// happy path (failure with refund) lives here once.
import type { EntityManager, FilterQuery } from '@mikro-orm/core';
import type { JobStatus, JobType, MediaJobInput } from '../lib/jobs';
import type { PlanName } from '../lib/plans';
import { refundJob } from './credits.repository';
import { Job } from './job.entity';

/** A job of the account, or null (ids of other accounts' jobs look exactly like unknown ones). */
export function findAccountJob(em: EntityManager, accountId: string, jobId: string): Promise<Job | null> {
  if (!/^[0-9a-f-]{36}$/i.test(jobId)) return Promise.resolve(null);
  return em.findOne(Job, { id: jobId.toLowerCase(), accountId });
}

export interface JobFilter {
  status?: JobStatus;
  jobType?: JobType;
}

/** Newest first by (created_at, id); `after` continues from a keyset cursor's where-clause. */
export function listAccountJobs(em: EntityManager, accountId: string, filter: JobFilter, after: Record<string, unknown> | null, limit: number): Promise<Job[]> {
  const where: Record<string, unknown> = { accountId, ...(filter.status ? { status: filter.status } : {}), ...(filter.jobType ? { jobType: filter.jobType } : {}), ...(after ?? {}) };
  return em.find(Job, where as FilterQuery<Job>, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
}

export type FailOutcome = { found: false } | { found: true; job: Job; status: 'completed' | 'failed'; refunded: boolean; /** This call moved the job to failed (false on a retry). */ changed: boolean };

/**
 * Marks a job failed with `errorMessage` and refunds its charge, in one transaction. Idempotent:
 * a failed job keeps its first message and is refunded at most once; a completed job is left alone.
 */
export async function failJobWithRefund(em: EntityManager, jobId: string, errorMessage: string): Promise<FailOutcome> {
  return em.transactional(async (tx) => {
    const job = await tx.findOne(Job, jobId);
    if (!job) return { found: false } as const;
    if (job.status === 'completed') return { found: true, job, status: 'completed', refunded: false, changed: false } as const;
    const changed = job.status !== 'failed';
    if (changed) {
      job.status = 'failed';
      job.progress = null;
      job.errorMessage = errorMessage;
      job.completedAt = new Date();
      await tx.flush();
    }
    const refunded = await refundJob(tx, job.accountId, job.id, job.creditsCharged);
    return { found: true, job, status: 'failed', refunded, changed } as const;
  });
}

/** The workflow input of a job, rebuilt from its row (for a workflow that may never have started). */
export function jobInputOf(job: Job, plan?: PlanName): MediaJobInput {
  return { jobId: job.id, jobType: job.jobType, sourceUrl: job.sourceUrl, params: job.parameters, accountId: job.accountId, plan } as MediaJobInput;
}

/** Jobs still pending since before `createdBefore`, oldest first: their workflow may never have been started. */
export function pendingJobsSince(em: EntityManager, createdBefore: Date, limit: number): Promise<Job[]> {
  return em.find(Job, { status: 'pending', createdAt: { $lt: createdBefore } }, { orderBy: { createdAt: 'asc' }, limit });
}
