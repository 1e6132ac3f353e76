// Jobs as every entry point (REST, MCP, dashboard) sees them: create from an operation's request,
// read one, list a page.
import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { Account } from '../accounts/entity';
import { chargeCredits } from '../credits/repository';
import { Job } from './entity';
import { jobEnded, waitForJobEnd } from './job-end';
import { accountJobCounts, createPendingJob, findAccountJob, jobInputOf, listAccountJobs, readAccountJob, type JobFilter } from './repository';
import { checkUrlAddress } from '../engines/egress/address-check';
import { DomainError } from '../lib/errors';
import type { FileLinks } from '../lib/file-links';
import { jobFiles } from './outputs';
import type { JobType, MediaJobInput } from './types';
import { log } from '../lib/logger';
import type { RequestStages } from '../lib/request-stages';
import { creditsCharged, jobsCreated } from '../lib/metrics';
import { OPERATIONS } from '../operations/registry';
import type { ExtraSource } from '../operations/define';
import { sourceOf } from '../lib/uploads';
import type { ApiDeps } from '../api/context';
import { afterCursor, page } from '../lib/cursor';
import { parseInput } from '../lib/validation';
import { serverCapabilities } from '../engines/speech/capabilities';
import { findAccountUpload } from '../uploads/service';

/** The body of a 202 from a create call (docs/api.md). */
export interface JobCreated {
  job_id: string;
  status: 'pending';
  credits_charged: number;
  job_type: JobType;
  created_at: string;
}

/** 422 unless `url` resolves to an allowed address (advisory: the binding check is at connect time). */
export async function assertReachable(field: string, url: string, allowPrivate: boolean): Promise<void> {
  const check = await checkUrlAddress(url, allowPrivate);
  if (!check.ok) throw DomainError.invalidField(field, check.reason);
}

/** A further source that is an upload: the account's, not expired, and as long as it must be (measured when received). */
async function checkExtraUpload(em: EntityManager, deps: ApiDeps, account: Account, extra: ExtraSource): Promise<void> {
  const field = `${extra.field}.upload_id`;
  await findAccountUpload(em, account, extra.upload_id!, field);
  const seconds = extra.seconds && (await deps.storage.readUploadInfo(extra.upload_id!))?.duration;
  if (extra.seconds && typeof seconds === 'number' && (seconds < extra.seconds[0] || seconds > extra.seconds[1])) {
    throw DomainError.invalidField(field, `is ${seconds.toFixed(1)} s long; give ${extra.seconds[0]}–${extra.seconds[1]} s`);
  }
}

/**
 * Validates an operation's request, charges the account and writes the job row in one transaction,
 * then hands the job to the dispatcher, which starts its workflow.
 */
export async function createJob(em: EntityManager, deps: ApiDeps, account: Account, jobType: JobType, body: unknown): Promise<JobCreated> {
  const op = OPERATIONS[jobType];
  let params = parseInput(op.request, body) as MediaJobInput['params'];
  const upload = (params as { upload_id?: string }).upload_id;
  const uploaded = upload ? await findAccountUpload(em, account, upload) : null;
  if (!upload) await assertReachable('url', (params as { url: string }).url, deps.config.allowPrivateNetwork);
  if (op.withSource) {
    const url = (params as { url?: string }).url;
    const source = uploaded ? { name: uploaded.filename, contentType: uploaded.contentType } : { name: url ? new URL(url).pathname : '', contentType: null };
    params = op.withSource(params as never, source) as MediaJobInput['params'];
  }
  const problems = op.check?.(params as never, serverCapabilities(deps.speech)) ?? [];
  if (problems.length) throw DomainError.invalid(problems.map((p) => p.message).join('; '), problems);
  for (const extra of op.extraSources?.(params as never) ?? []) {
    if (extra.upload_id) await checkExtraUpload(em, deps, account, extra);
    else if (extra.url) await assertReachable(`${extra.field}.url`, extra.url, deps.config.allowPrivateNetwork);
  }
  const source = sourceOf(params);
  if (params.webhook_url) await assertReachable('webhook_url', params.webhook_url, deps.config.allowPrivateNetwork);

  const cost = op.cost(params as never);
  const jobId = crypto.randomUUID();
  const job = await chargeCredits(em, account.id, cost, `a ${jobType} job`, async (tx) => {
    const row = createPendingJob(tx, { id: jobId, accountId: account.id, jobType, sourceUrl: source, params: params as unknown as Record<string, unknown>, cost, webhookUrl: params.webhook_url });
    return { jobId, value: row };
  });

  // The committed row is the outbox entry: the dispatcher starts its workflow now, and the reconciler
  // (a Temporal Schedule) starts it later if this process dies first. The caller never waits on Temporal.
  // how much of the account's own work is ahead of this job sets its priority (accountPriority)
  // the job is committed and charged: a database that fails now must not turn its 202 into an error (a client would create it again)
  const counts = await accountJobCounts(em, account.id).catch(() => ({ running: 0, queued: 0 }));
  const jobsAhead = Math.max(0, counts.running + counts.queued - 1);
  deps.dispatcher.dispatch({ jobId, jobType, sourceUrl: source, params, accountId: account.id, plan: account.plan, jobsAhead } as MediaJobInput);
  jobsCreated.inc({ type: jobType });
  creditsCharged.inc({ for: jobType }, cost);
  log.info({ job_id: jobId, job_type: jobType, account_id: account.id, status: 'pending', credits: cost }, 'job created');
  return { job_id: job.id, status: 'pending', credits_charged: job.creditsCharged, job_type: job.jobType, created_at: job.createdAt.toISOString() };
}

/** How long a cancel waits for the workflow to end the job before it answers with the job still running. */
const CANCEL_WAIT_SECONDS = 5;

/**
 * Cancels a pending or processing job through its workflow (409 once it has ended) and waits a few
 * seconds for the workflow to end it, so most callers see the final state at once.
 */
export async function cancelJob(em: EntityManager, deps: Pick<ApiDeps, 'orchestrator' | 'links'>, account: Account, jobId: string): Promise<{ ended: boolean; job: JobResource }> {
  const job = await findAccountJob(em, account.id, jobId);
  if (!job) throw DomainError.notFound(`No job with id ${jobId} in this account`);
  if (jobEnded(job)) throw DomainError.conflict(`Job ${job.id} has already ${job.status === 'completed' ? 'completed' : 'failed'}; only pending or processing jobs can be cancelled`);
  await deps.orchestrator.cancelJob(jobInputOf(job));
  const now = (await waitForJobEnd(em, deps.orchestrator, account.id, job.id, { seconds: CANCEL_WAIT_SECONDS })) ?? job;
  return { ended: jobEnded(now), job: await jobResource(deps, now) };
}

/** The Job resource (docs/api.md), with `progress`. */
export function presentJob(job: Job, links: FileLinks, progress: number | null = job.progress) {
  const completed = job.status === 'completed';
  return {
    job_id: job.id,
    job_type: job.jobType,
    status: job.status,
    source_url: job.sourceUrl,
    parameters: job.parameters,
    credits_charged: job.creditsCharged,
    progress,
    download_url: completed && job.outputFile && job.expiresAt ? links.url(job.id, job.expiresAt) : null,
    files: jobFiles(job, links),
    result_data: completed ? job.resultData : null,
    error_message: job.status === 'failed' ? job.errorMessage : null,
    failure_kind: job.status === 'failed' ? job.failureKind : null,
    created_at: job.createdAt.toISOString(),
    completed_at: job.completedAt?.toISOString() ?? null,
    expires_at: completed ? (job.expiresAt?.toISOString() ?? null) : null,
    batch_id: job.batchId ?? null,
  };
}

export type JobResource = ReturnType<typeof presentJob>;

// The highest progress this process has shown for each running job: between two steps no activity
// has heartbeated yet, and a client must never see a running job's progress go back.
const shownProgress = new Map<string, number>();

/** A job with live progress: a running job's comes from its activity's heartbeat in Temporal. */
export async function jobResource(deps: Pick<ApiDeps, 'orchestrator' | 'links'>, job: Job): Promise<JobResource> {
  if (job.status !== 'processing') {
    shownProgress.delete(job.id);
    return presentJob(job, deps.links, job.status === 'completed' ? 100 : job.status === 'failed' ? null : 0);
  }
  const live = await deps.orchestrator.jobProgress(job.id);
  const progress = Math.max(live ?? 0, job.progress ?? 0, shownProgress.get(job.id) ?? 0);
  if (shownProgress.size > 10_000) shownProgress.clear(); // a bound: entries of jobs read once and never again
  shownProgress.set(job.id, progress);
  return presentJob(job, deps.links, progress);
}

export async function getJob(em: EntityManager, deps: Pick<ApiDeps, 'orchestrator' | 'links'>, accountId: string, jobId: string, stages?: RequestStages): Promise<JobResource> {
  const job = await readAccountJob(em, accountId, jobId);
  stages?.mark('read');
  if (!job) throw DomainError.notFound(`No job with id ${jobId} in this account`);
  const resource = await jobResource(deps, job);
  stages?.mark('live');
  return resource;
}

// Ended jobs as GET /v1/jobs/{id} last answered them: an ended job's row does not change, so a poll
// after the end is answered without the database, the mapping to a Job or the presenting. Entries live
// ENDED_READ_TTL_MS (never past the job's expiry), so a row changed by hand is seen within that.
const endedReads = new Map<string, { accountId: string; body: string; until: number }>();
const ENDED_READ_TTL_MS = 30_000;
const ENDED_READS_MAX = 10_000;

/** The job as the REST read sends it (JSON text), from the ended-jobs cache when it holds it. */
export async function readJobBody(em: EntityManager, deps: Pick<ApiDeps, 'orchestrator' | 'links'>, accountId: string, jobId: string, stages?: RequestStages): Promise<string> {
  const key = jobId.toLowerCase();
  const hit = endedReads.get(key);
  const now = Date.now();
  if (hit && hit.accountId === accountId && hit.until > now) {
    stages?.mark('cached');
    return hit.body;
  }
  const job = await getJob(em, deps, accountId, jobId, stages);
  const body = JSON.stringify(job);
  stages?.mark('serialize');
  if (jobEnded(job)) {
    if (endedReads.size >= ENDED_READS_MAX) endedReads.delete(endedReads.keys().next().value!);
    const expires = job.expires_at ? Date.parse(job.expires_at) : Infinity;
    endedReads.set(key, { accountId, body, until: Math.min(now + ENDED_READ_TTL_MS, expires) });
  }
  return body;
}

export async function listJobs(
  em: EntityManager,
  deps: Pick<ApiDeps, 'orchestrator' | 'links'>,
  account: Account,
  query: JobFilter & { cursor?: string; limit: number },
): Promise<{ items: JobResource[]; next_cursor: string | null; has_more: boolean }> {
  const rows = await listAccountJobs(em, account.id, query, query.cursor ? afterCursor(query.cursor) : null, query.limit + 1);
  const p = page(rows, query.limit);
  return { ...p, items: await Promise.all(p.items.map((j) => jobResource(deps, j))) };
}
