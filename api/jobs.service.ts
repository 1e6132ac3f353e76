import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { chargeCredits, refundJob } from '../db/credits';
import { Job } from '../db/job.entity';
import { ApiError } from '../lib/errors';
import type { JobParamsByType, MediaJobInput, OperationType } from '../lib/job.types';
import { checkUrlAddress } from '../lib/url-safety';
import type { ApiContext, ApiDeps } from './context';
import { accountOf } from './context';

/** 422 unless `url` is http(s) and resolves to an allowed address. */
export async function assertSafeUrl(field: string, url: string, allowPrivate: boolean): Promise<void> {
  const check = await checkUrlAddress(url, allowPrivate);
  if (!check.ok) throw ApiError.unprocessable(`${field} ${check.reason}`, [{ field, message: check.reason }]);
}

export function presentJob(job: Job, links: ApiDeps['links'], progress: number | null = job.progress) {
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
    result_data: completed ? job.resultData : null,
    error_message: job.status === 'failed' ? job.errorMessage : null,
    created_at: job.createdAt.toISOString(),
    completed_at: job.completedAt?.toISOString() ?? null,
    expires_at: completed ? (job.expiresAt?.toISOString() ?? null) : null,
  };
}

/**
 * Charges the account and writes the job row in one transaction, then starts the job's workflow.
 * If the workflow cannot be started the job fails at once with a refund, and the caller gets 503.
 */
export async function createJob<T extends OperationType>(
  ctx: ApiContext,
  deps: ApiDeps,
  spec: { jobType: T; cost: number; params: JobParamsByType[T] },
): Promise<void> {
  const account = accountOf(ctx);
  const { params } = spec;
  await assertSafeUrl('url', params.url, deps.config.allowPrivateNetwork);
  if (params.webhook_url) await assertSafeUrl('webhook_url', params.webhook_url, deps.config.allowPrivateNetwork);

  const jobId = crypto.randomUUID();
  const job = await chargeCredits(ctx.state.em, account.id, spec.cost, `a ${spec.jobType} job`, async (tx: EntityManager) => {
    const row = tx.create(Job, {
      id: jobId,
      accountId: account.id,
      jobType: spec.jobType,
      status: 'pending',
      sourceUrl: params.url,
      parameters: params as unknown as Record<string, unknown>,
      creditsCharged: spec.cost,
      progress: 0,
      webhookUrl: params.webhook_url,
      resultData: null,
      createdAt: new Date(),
    });
    return { jobId, value: row };
  });

  try {
    // TypeScript cannot correlate jobType and params through the generic; createJob's signature does.
    await deps.orchestrator.startJob({ jobId, jobType: spec.jobType, sourceUrl: params.url, params } as MediaJobInput);
  } catch (err) {
    await ctx.state.em.transactional(async (tx) => {
      const row = await tx.findOneOrFail(Job, jobId);
      row.status = 'failed';
      row.errorMessage = 'The job could not be queued; it was not run and its credits were refunded';
      row.completedAt = new Date();
      row.progress = null;
      await tx.flush();
      await refundJob(tx, account.id, jobId, spec.cost);
    });
    throw new ApiError(503, `The job engine is unavailable, so the job was not queued (credits refunded). Try again shortly. (${(err as Error).message})`);
  }

  ctx.status = 202;
  ctx.set('Location', `/v1/jobs/${job.id}`);
  ctx.body = { job_id: job.id, status: 'pending', credits_charged: job.creditsCharged, job_type: job.jobType, created_at: job.createdAt.toISOString() };
}
