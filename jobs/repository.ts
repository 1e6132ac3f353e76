// Queries and state changes of job rows. Every state change a job can make outside its workflow's
// happy path (failure with refund) lives here once.
import type { EntityManager, FilterQuery } from '@mikro-orm/core';
import type { Storage } from '../engines/storage';
import type { JobStatus, JobType, MediaJobInput } from './types';
import type { StoredFailureKind } from '../lib/job-failure';
import type { PlanName } from '../lib/plans';
import { onPostgres, readRows } from '../db/bound-drivers';
import { lockAccount, refundJob } from '../credits/repository';
import { Job } from './entity';

/** A job id as the API shows it (any other string names no job). */
const JOB_ID = /^[0-9a-f-]{36}$/i;

/** A new job's row, pending and charged `cost`, in the caller's transaction (the charge's). */
export function createPendingJob(tx: EntityManager, job: { id: string; accountId: string; jobType: JobType; sourceUrl: string; params: Record<string, unknown>; cost: number; webhookUrl: string | null; batchId?: string }): Job {
  return tx.create(Job, {
    id: job.id,
    accountId: job.accountId,
    jobType: job.jobType,
    status: 'pending',
    sourceUrl: job.sourceUrl,
    parameters: job.params,
    creditsCharged: job.cost,
    progress: 0,
    webhookUrl: job.webhookUrl,
    resultData: null,
    batchId: job.batchId ?? null,
    createdAt: new Date(),
  });
}

/** A job of the account, or null (ids of other accounts' jobs look exactly like unknown ones). */
export function findAccountJob(em: EntityManager, accountId: string, jobId: string): Promise<Job | null> {
  if (!JOB_ID.test(jobId)) return Promise.resolve(null);
  return em.findOne(Job, { id: jobId.toLowerCase(), accountId });
}

/**
 * findAccountJob for reading only: one plain select on the reading connection, without query
 * building, and a Job the EntityManager does not manage (the job read is the API's commonest
 * request: building the query, then merging the row into the identity map with a snapshot for change
 * tracking, were most of its cost).
 */
export async function readAccountJob(em: EntityManager, accountId: string, jobId: string): Promise<Job | null> {
  if (!JOB_ID.test(jobId)) return null;
  const rows = await readRows(em, 'select * from jobs where id = ? and account_id = ?', [jobId.toLowerCase(), accountId]);
  return rows[0] ? unmanagedJob(em, rows[0]) : null;
}

/** A job row as a Job, with the ORM's column names and conversions (dates, JSON), outside the identity map: to read, never to change. */
function unmanagedJob(em: EntityManager, row: Record<string, unknown>): Job {
  const meta = em.getMetadata().get<Job>(Job.name);
  const platform = em.getPlatform();
  const data = em.getDriver().mapResult(row as never, meta) as Record<string, unknown>;
  for (const prop of meta.props) {
    const value = data[prop.name];
    if (prop.customType && value !== null && value !== undefined) data[prop.name] = prop.customType.convertToJSValue(value, platform);
  }
  return Object.assign(Object.create(Job.prototype) as Job, data);
}

export interface JobFilter {
  status?: JobStatus;
  jobType?: JobType;
  batchId?: string;
}

/** Newest first by (created_at, id); `after` continues from a keyset cursor's where-clause. */
export function listAccountJobs(em: EntityManager, accountId: string, filter: JobFilter, after: Record<string, unknown> | null, limit: number): Promise<Job[]> {
  const where: Record<string, unknown> = { accountId, ...(filter.status ? { status: filter.status } : {}), ...(filter.jobType ? { jobType: filter.jobType } : {}), ...(filter.batchId ? { batchId: filter.batchId } : {}), ...(after ?? {}) };
  return em.find(Job, where as FilterQuery<Job>, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
}

export type FailOutcome = { found: false } | { found: true; job: Job; status: 'completed' | 'failed'; refunded: boolean; /** This call moved the job to failed (false on a retry). */ changed: boolean };

/**
 * Marks a job failed with `errorMessage` and its kind, and refunds its charge, in one transaction.
 * Idempotent: a failed job keeps its first message and kind and is refunded at most once; a
 * completed job is left alone.
 */
export async function failJobWithRefund(em: EntityManager, jobId: string, errorMessage: string, failureKind: StoredFailureKind | null = null): Promise<FailOutcome> {
  return em.transactional(async (tx) => {
    const job = await tx.findOne(Job, jobId);
    if (!job) return { found: false } as const;
    if (job.status === 'completed') return { found: true, job, status: 'completed', refunded: false, changed: false } as const;
    const changed = job.status !== 'failed';
    if (changed) {
      job.status = 'failed';
      job.progress = null;
      job.errorMessage = errorMessage;
      job.failureKind = failureKind;
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

export type SlotClaim = 'claimed' | 'waiting' | 'not-pending';

/**
 * Moves a pending job to processing when its account's jobs processing, plus its older jobs still
 * pending, leave a slot for it: the account's jobs take its slots in order (an older job's slot is
 * kept for it), and jobs created together within the slots start together. Two claims can never
 * both take the last slot. Returns the job's type when claimed (for the log).
 */
export async function claimRunningSlot(em: EntityManager, jobId: string, accountId: string, maxRunning: number): Promise<{ claim: SlotClaim; jobType: string | null }> {
  return onPostgres(em) ? claimUnderLock(em, jobId, accountId, maxRunning) : claimInOneStatement(em, jobId, accountId, maxRunning);
}

/**
 * SQLite: the count and the change in one statement, which SQLite runs under its database-wide
 * write lock. A transaction of five statements held the process's one connection across five
 * round trips through the event loop, and every job claims at least once.
 */
async function claimInOneStatement(em: EntityManager, jobId: string, accountId: string, maxRunning: number): Promise<{ claim: SlotClaim; jobType: string | null }> {
  const claimed = (await em.getConnection().execute(
    `update jobs set status = 'processing', started_at = ?, progress = 0
      where id = ? and account_id = ? and status = 'pending'
        and (select count(*) from jobs o
              where o.account_id = jobs.account_id
                and (o.status = 'processing'
                     or (o.status = 'pending' and o.waiting_platform is null and (o.created_at < jobs.created_at or (o.created_at = jobs.created_at and o.id < jobs.id))))) < ?
      returning job_type`,
    [new Date(), jobId, accountId, maxRunning],
    'all',
  )) as { job_type: string }[];
  if (claimed[0]) return { claim: 'claimed', jobType: claimed[0].job_type };
  // committed state: pending means no slot yet; anything else (or no such job) has been claimed or has ended
  const [row] = await readRows(em, 'select status from jobs where id = ? and account_id = ?', [jobId, accountId]);
  return { claim: row?.status === 'pending' ? 'waiting' : 'not-pending', jobType: null };
}

/** PostgreSQL: the account row locked, so concurrent claims of its jobs count one after another. */
async function claimUnderLock(em: EntityManager, jobId: string, accountId: string, maxRunning: number): Promise<{ claim: SlotClaim; jobType: string | null }> {
  return em.transactional(async (tx) => {
    await lockAccount(tx, accountId);
    // read under the lock: a concurrent claim of the same job may have committed since
    const job = await tx.findOne(Job, { id: jobId, accountId }, { refresh: true });
    if (!job || job.status !== 'pending') return { claim: 'not-pending', jobType: null };
    // the account's running jobs and its pending ones older than this, in one read
    const [ahead] = (await tx.getConnection().execute(
      `select coalesce(sum(case when status = 'processing' then 1 else 0 end), 0) as running,
              coalesce(sum(case when status = 'pending' and waiting_platform is null and (created_at < ? or (created_at = ? and id < ?)) then 1 else 0 end), 0) as older
         from jobs where account_id = ? and status in ('processing', 'pending')`,
      [job.createdAt, job.createdAt, job.id, accountId],
      'all',
      tx.getTransactionContext(),
    )) as { running: number | string; older: number | string }[];
    if (Number(ahead!.running) + Number(ahead!.older) >= maxRunning) return { claim: 'waiting', jobType: null };
    job.status = 'processing';
    job.startedAt = new Date();
    job.progress = 0;
    await tx.flush();
    return { claim: 'claimed', jobType: job.jobType };
  });
}

/** A job's account and that account's plan, read beside the writes (null for an unknown job). */
export async function jobAccountPlan(em: EntityManager, jobId: string): Promise<{ accountId: string; plan: PlanName } | null> {
  const rows = await readRows(em, 'select j.account_id as account_id, a.plan as plan from jobs j join accounts a on a.id = j.account_id where j.id = ?', [jobId]);
  return rows[0] ? { accountId: rows[0].account_id as string, plan: rows[0].plan as PlanName } : null;
}

/** The account's oldest pending jobs, as many as it has free slots: the ones to wake when a slot frees. */
export async function jobsDueASlot(em: EntityManager, accountId: string, maxRunning: number): Promise<string[]> {
  const free = maxRunning - (await em.count(Job, { accountId, status: 'processing' }));
  if (free <= 0) return [];
  const next = await em.find(Job, { accountId, status: 'pending', waitingPlatform: null }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: free, fields: ['id'] });
  return next.map((j) => j.id);
}

/** How many of the account's jobs are processing now, and how many wait for a slot (one read beside the writes). */
export async function accountJobCounts(em: EntityManager, accountId: string): Promise<{ running: number; queued: number }> {
  const rows = await readRows(em, "select status, count(*) as n from jobs where account_id = ? and status in ('processing', 'pending') group by status", [accountId]);
  const count = (status: string) => Number(rows.find((r) => r.status === status)?.n ?? 0);
  return { running: count('processing'), queued: count('pending') };
}

/** Jobs processing and pending per plan (bounded labels for metrics: never per account). */
export async function jobCountsByPlan(em: EntityManager): Promise<{ plan: string; status: string; count: number }[]> {
  const rows = (await em
    .getConnection()
    .execute("select a.plan as plan, j.status as status, count(*) as n from jobs j join accounts a on a.id = j.account_id where j.status in ('pending', 'processing') group by a.plan, j.status", [], 'all')) as { plan: string; status: string; n: number | string }[];
  return rows.map((r) => ({ plan: r.plan, status: r.status, count: Number(r.n) }));
}

/** Ends the output of completed jobs whose link has expired: the file goes, the row stays (its link answers 410). Returns how many. */
export async function removeExpiredOutputs(em: EntityManager, storage: Storage, now: Date, limit = 500): Promise<number> {
  const expired = await em.find(Job, { status: 'completed', outputFile: { $ne: null }, expiresAt: { $lt: now } }, { limit });
  for (const job of expired) {
    await storage.removeOutput(job.id);
    job.outputFile = null;
  }
  await em.flush();
  return expired.length;
}

/**
 * Marks a job as waiting for its platform (pending, holding none of its account's running slots),
 * or (platform null) as waiting no more. A job that has ended is left as it is.
 */
export async function setWaitingPlatform(em: EntityManager, jobId: string, platform: string | null): Promise<void> {
  if (platform === null) {
    await em.nativeUpdate(Job, { id: jobId, waitingPlatform: { $ne: null } }, { waitingPlatform: null });
    return;
  }
  await em.nativeUpdate(Job, { id: jobId, status: { $in: ['pending', 'processing'] } }, { status: 'pending', waitingPlatform: platform, progress: 0 });
}
