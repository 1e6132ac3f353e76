// Batches as every entry point sees them: create one (validated like each of its items' jobs), read
// it with its counts and a page of items, list them, cancel one.
import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { Account } from '../accounts/entity';
import type { ApiDeps } from '../api/context';
import { chargeCredits, refundJob } from '../credits/repository';
import { serverCapabilities } from '../engines/speech/capabilities';
import { assertReachable } from '../jobs/service';
import type { JobType } from '../jobs/types';
import { afterCursor, encodePositionCursor, page, positionAfter } from '../lib/cursor';
import { DomainError } from '../lib/errors';
import { log } from '../lib/logger';
import { PLANS } from '../lib/plans';
import { parseInput } from '../lib/validation';
import { OPERATIONS } from '../operations/registry';
import { Batch } from './entity';
import { batchCounts, findAccountBatch, listBatchItems } from './repository';
import { CreateBatchSchema } from './schemas';
import { LIST_OPERATION, type BatchCounts, type BatchSelection } from './types';

/** What `list` costs: one metadata read. */
export const LIST_COST = 1;

export interface BatchCreated {
  batch_id: string;
  status: 'expanding';
  operation: string;
  credits_charged: number;
  created_at: string;
}

/** 422 unless `parameters` make a valid request of `operation` for `url` (each item's own URL takes its place). */
export function checkOperationParameters(deps: Pick<ApiDeps, 'speech'>, operation: JobType, parameters: Record<string, unknown>, url: string): void {
  for (const field of ['url', 'upload_id', 'webhook_url']) {
    if (field in parameters) throw DomainError.invalidField(`parameters.${field}`, field === 'webhook_url' ? "is the collection's own field: give webhook_url beside parameters" : 'comes from the source: each item is its own URL');
  }
  const op = OPERATIONS[operation];
  const res = op.request.safeParse({ ...parameters, url });
  if (!res.success) {
    const errors = res.error.issues.map((i) => ({ field: ['parameters', ...i.path.map(String)].join('.'), message: i.message }));
    throw DomainError.invalid(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
  }
  const problems = op.check?.(res.data as never, serverCapabilities(deps.speech)) ?? [];
  if (problems.length) throw DomainError.invalid(problems.map((p) => p.message).join('; '), problems);
}

/** Validates the request, writes the batch (charging `list` its read) and starts its workflow. */
export async function createBatch(em: EntityManager, deps: ApiDeps, account: Account, body: unknown): Promise<BatchCreated> {
  const req = parseInput(CreateBatchSchema, body);
  const cap = PLANS[account.plan].maxBatchItems;
  if (req.max_items !== undefined && req.max_items > cap) throw DomainError.invalidField('max_items', `is more than the ${account.plan} plan's limit of ${cap} items per batch`);
  if (req.operation !== LIST_OPERATION) checkOperationParameters(deps, req.operation as JobType, req.parameters, 'url' in req.source ? req.source.url : req.source.urls[0]!);
  if ('url' in req.source) await assertReachable('source.url', req.source.url, deps.config.allowPrivateNetwork);
  if (req.webhook_url) await assertReachable('webhook_url', req.webhook_url, deps.config.allowPrivateNetwork);
  const selection: BatchSelection = { maxItems: req.max_items ?? cap, after: req.after ?? null, before: req.before ?? null, order: req.order };
  const id = crypto.randomUUID();
  const row = {
    id,
    accountId: account.id,
    operation: req.operation,
    parameters: req.parameters,
    source: req.source,
    selection,
    webhookUrl: req.webhook_url ?? null,
    status: 'expanding' as const,
    creditsCharged: req.operation === LIST_OPERATION ? LIST_COST : 0,
    createdAt: new Date(),
  };
  if (row.creditsCharged) {
    await chargeCredits(em, account.id, row.creditsCharged, 'a list batch', async (tx) => {
      tx.create(Batch, row);
      return { jobId: id, value: null };
    });
  } else {
    em.create(Batch, row);
    await em.flush();
  }
  try {
    await deps.orchestrator.startBatch({ batchId: id, accountId: account.id, plan: account.plan, operation: req.operation, source: req.source, selection });
  } catch (err) {
    // never started: the batch ends failed (refunded) rather than waiting for a workflow that will not come
    await em.nativeUpdate(Batch, { id }, { status: 'failed', error: 'the batch could not be started; try again', completedAt: new Date() });
    await refundJob(em, account.id, id, row.creditsCharged, 'batch not started');
    throw err;
  }
  log.info({ batch_id: id, account_id: account.id, operation: req.operation, status: 'expanding' }, 'batch created');
  return { batch_id: id, status: 'expanding', operation: req.operation, credits_charged: row.creditsCharged, created_at: row.createdAt.toISOString() };
}

/** The Batch resource without its items (docs/api.md). */
function presentBatch(batch: Batch, counts: BatchCounts) {
  return {
    batch_id: batch.id,
    status: batch.status,
    operation: batch.operation,
    parameters: batch.parameters,
    source: batch.source,
    max_items: batch.selection.maxItems,
    after: batch.selection.after,
    before: batch.selection.before,
    order: batch.selection.order,
    counts,
    error: batch.status === 'failed' ? batch.error : null,
    note: batch.note,
    credits_charged: batch.creditsCharged,
    webhook_url: batch.webhookUrl,
    subscription_id: batch.subscriptionId,
    created_at: batch.createdAt.toISOString(),
    completed_at: batch.completedAt?.toISOString() ?? null,
  };
}

export async function getBatch(em: EntityManager, account: Account, batchId: string, query: { cursor?: string; limit: number }) {
  const batch = await findAccountBatch(em, account.id, batchId);
  if (!batch) throw DomainError.notFound(`No batch with id ${batchId} in this account`);
  const after = query.cursor ? positionAfter(query.cursor) : -1;
  const rows = await listBatchItems(em, batch.id, after, query.limit + 1);
  const items = rows.slice(0, query.limit);
  const hasMore = rows.length > query.limit;
  return {
    ...presentBatch(batch, await batchCounts(em, batch.id)),
    items: items.map((i) => ({ url: i.url, title: i.title, published_at: i.publishedAt?.toISOString() ?? null, duration: i.duration, thumbnail: i.thumbnail, status: i.status, job_id: i.jobId, reason: i.status === 'skipped' || i.status === 'failed' ? i.reason : null })),
    next_cursor: hasMore && items.length ? encodePositionCursor(items[items.length - 1]!.position) : null,
    has_more: hasMore,
  };
}

export async function listBatches(em: EntityManager, account: Account, query: { cursor?: string; limit: number }) {
  const where = { accountId: account.id, ...(query.cursor ? afterCursor(query.cursor) : {}) };
  const rows = await em.find(Batch, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: query.limit + 1 });
  const p = page(rows, query.limit);
  return { ...p, items: await Promise.all(p.items.map(async (b) => presentBatch(b, await batchCounts(em, b.id)))) };
}

/** How long a cancel waits for the batch to end before it answers with the batch still ending. */
const CANCEL_WAIT_MS = 10_000;

/** Cancels the batch's unfinished items (409 once it has ended) and waits a little for it to end. */
export async function cancelBatch(em: EntityManager, deps: Pick<ApiDeps, 'orchestrator'>, account: Account, batchId: string) {
  const batch = await findAccountBatch(em, account.id, batchId);
  if (!batch) throw DomainError.notFound(`No batch with id ${batchId} in this account`);
  const ended = (b: Batch) => b.status === 'completed' || b.status === 'cancelled' || b.status === 'failed';
  if (ended(batch)) throw DomainError.conflict(`Batch ${batch.id} has already ended (${batch.status}); only a batch still expanding or running can be cancelled`);
  await deps.orchestrator.cancelBatch(batch.id);
  const until = Date.now() + CANCEL_WAIT_MS;
  let now = batch;
  while (!ended(now) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 250));
    now = (await em.fork().findOne(Batch, batch.id)) ?? now;
  }
  return { ended: ended(now), batch: await getBatch(em.fork(), account, batch.id, { limit: 20 }) };
}
