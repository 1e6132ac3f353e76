// A batch's steps on the control queue: store its expanded items, create its items' jobs a window at
// a time (each charged on its own, or skipped when the balance cannot pay), cancel, finish, and plan
// its batch.completed event. Each is idempotent: Temporal may retry it.
import crypto from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import type { Storage } from '../engines/storage';
import { checkUrlAddress } from '../engines/egress/address-check';
import type { CollectionItem } from '../engines/collections/collection';
import type { Config } from '../lib/config';
import { DomainError } from '../lib/errors';
import { JobFailure } from '../lib/job-failure';
import { log } from '../lib/logger';
import { PLANS, type PlanName } from '../lib/plans';
import { Account } from '../accounts/entity';
import { chargeCredits, refundJob } from '../credits/repository';
import { Job } from '../jobs/entity';
import { accountJobCounts, createPendingJob, jobInputOf } from '../jobs/repository';
import type { JobType, MediaJobInput } from '../jobs/types';
import { OPERATIONS } from '../operations/registry';
import { subscribedEndpoints } from '../webhooks/repository';
import type { EventPlan, EventTarget } from '../webhooks/activities';
import { Batch, BatchItem } from './entity';
import { batchCounts, batchProgress, insertBatchItems, waitingItems } from './repository';
import { LIST_OPERATION, type BatchCounts, type BatchProgress } from './types';

export interface BatchActivityDeps {
  orm: MikroORM;
  storage: Storage;
  config: Pick<Config, 'allowPrivateNetwork' | 'webhookRetryScheduleMs'>;
  /** Starts a committed job's workflow (the reconciler starts any this misses). */
  startJob?: (input: MediaJobInput) => Promise<boolean>;
  /** Cancels a job through its workflow, starting it first if it never started. */
  cancelJob?: (input: MediaJobInput) => Promise<boolean>;
}

/** The job id of a batch's item: fixed by the batch and position, so a retried step makes the same job (a UUID of version 8). */
export function itemJobId(batchId: string, position: number): string {
  const h = crypto.createHash('sha256').update(`${batchId}:${position}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function createBatchActivities(deps: BatchActivityDeps) {
  const { orm, storage, config } = deps;

  async function loadBatch(em: EntityManager, batchId: string): Promise<Batch> {
    const batch = await em.findOne(Batch, batchId);
    if (!batch) throw JobFailure.internal(`batch ${batchId} does not exist`, 'BatchMissing');
    return batch;
  }

  /** The item's job, charged; or the item skipped with why (its address, its parameters, the balance). */
  async function createItemJob(em: EntityManager, batch: Batch, plan: PlanName, item: BatchItem): Promise<MediaJobInput | null> {
    const skip = async (reason: string): Promise<null> => {
      await em.nativeUpdate(BatchItem, { batchId: batch.id, position: item.position, state: 'waiting' }, { state: 'skipped', reason });
      return null;
    };
    const jobType = batch.operation as JobType;
    const op = OPERATIONS[jobType];
    const parsed = op.request.safeParse({ ...batch.parameters, url: item.url, ...(batch.webhookUrl ? { webhook_url: batch.webhookUrl } : {}) });
    if (!parsed.success) return skip(`the item cannot run as ${jobType}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'url'} ${i.message}`).join('; ')}`);
    const address = await checkUrlAddress(item.url, config.allowPrivateNetwork);
    if (!address.ok) return skip(`the item's address is not allowed: ${address.reason}`);
    let params = parsed.data as MediaJobInput['params'];
    if (op.withSource) params = op.withSource(params as never, { name: new URL(item.url).pathname, contentType: null }) as MediaJobInput['params'];
    const cost = op.cost(params as never);
    const jobId = itemJobId(batch.id, item.position);
    try {
      await chargeCredits(em, batch.accountId, cost, `a ${jobType} job (batch ${batch.id})`, async (tx) => {
        createPendingJob(tx, { id: jobId, accountId: batch.accountId, jobType, sourceUrl: item.url, params: params as unknown as Record<string, unknown>, cost, webhookUrl: batch.webhookUrl, batchId: batch.id });
        await tx.nativeUpdate(BatchItem, { batchId: batch.id, position: item.position }, { state: 'created', jobId });
        return { jobId, value: null };
      });
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'insufficient_credits') return skip(`not run: ${err.detail}`);
      throw err;
    }
    log.info({ job_id: jobId, job_type: jobType, account_id: batch.accountId, batch_id: batch.id, status: 'pending', credits: cost }, 'job created');
    const counts = await accountJobCounts(em, batch.accountId).catch(() => ({ running: 0, queued: 0 }));
    return { jobId, jobType, sourceUrl: item.url, params, accountId: batch.accountId, plan, jobsAhead: Math.max(0, counts.running + counts.queued - 1) } as MediaJobInput;
  }

  return {
    /** Stores the expanded items (once: a batch past expanding keeps what it has) and moves the batch on. */
    async storeBatchItems(input: { batchId: string; file: string; note: string | null }): Promise<{ total: number }> {
      const em = orm.em.fork();
      const batch = await loadBatch(em, input.batchId);
      if (batch.status === 'expanding') {
        const text = await storage.readOutputText(input.file);
        if (text === null) throw JobFailure.internal(`the expanded items of batch ${batch.id} are not in storage`, 'BatchItemsMissing');
        const items = (JSON.parse(text) as { items: CollectionItem[] }).items;
        const listing = batch.operation === LIST_OPERATION;
        await em.transactional(async (tx) => {
          await tx.nativeDelete(BatchItem, { batchId: batch.id });
          await insertBatchItems(tx, batch.id, items, listing ? 'listed' : 'waiting');
          const row = await tx.findOneOrFail(Batch, batch.id);
          row.status = listing ? 'completed' : 'running';
          row.note = input.note;
          if (listing) row.completedAt = new Date();
        });
      }
      await storage.removeOutput(`batch-${input.batchId}`).catch(() => undefined);
      return { total: (await batchCounts(em, input.batchId)).total };
    },

    /** The source could not be expanded: the batch fails with why, and a `list` batch's charge is refunded. */
    async failBatchExpansion(input: { batchId: string; message: string }): Promise<void> {
      const em = orm.em.fork();
      await em.transactional(async (tx) => {
        const batch = await loadBatch(tx, input.batchId);
        if (batch.status === 'expanding') {
          batch.status = 'failed';
          batch.error = input.message;
          batch.completedAt = new Date();
        }
        await refundJob(tx, batch.accountId, batch.id, batch.creditsCharged, 'batch source could not be expanded');
      });
    },

    /**
     * Creates jobs for the batch's next waiting items while fewer than the plan's running slots of its
     * jobs are unfinished, so a batch never holds more of the account's slots than one burst would.
     */
    async startBatchItems(input: { batchId: string }): Promise<BatchProgress> {
      const em = orm.em.fork();
      const batch = await loadBatch(em, input.batchId);
      if (batch.status !== 'running') return batchProgress(em, batch.id);
      const account = await em.findOneOrFail(Account, batch.accountId);
      const window = PLANS[account.plan].maxRunningJobs;
      let progress = await batchProgress(em, batch.id);
      const free = window - progress.unfinished;
      if (free > 0 && progress.waiting > 0) {
        for (const item of await waitingItems(em, batch.id, free)) {
          const created = await createItemJob(em, batch, account.plan, item);
          // the row is committed: a start that fails now is the reconciler's
          if (created && deps.startJob) await deps.startJob(created).catch((err: unknown) => log.warn({ err, job_id: created.jobId }, 'batch item job not started now (the reconciler will start it)'));
        }
        progress = await batchProgress(em, batch.id);
      }
      return progress;
    },

    /** Cancels what has not finished: waiting items are skipped, unfinished jobs cancelled through their workflows. */
    async cancelBatchItems(input: { batchId: string }): Promise<{ cancelled: number }> {
      const em = orm.em.fork();
      const batch = await loadBatch(em, input.batchId);
      await em.nativeUpdate(BatchItem, { batchId: batch.id, state: 'waiting' }, { state: 'skipped', reason: 'the batch was cancelled' });
      const account = await em.findOne(Account, batch.accountId);
      const jobs = await em.find(Job, { batchId: batch.id, status: { $in: ['pending', 'processing'] } });
      if (!deps.cancelJob) throw new Error('cancelBatchItems needs a Temporal client');
      for (const job of jobs) await deps.cancelJob(jobInputOf(job, account?.plan));
      return { cancelled: jobs.length };
    },

    /** Ends the batch (completed, or cancelled) and returns its counts; an ended batch keeps its status. */
    async finishBatch(input: { batchId: string; cancelled: boolean }): Promise<BatchCounts> {
      const em = orm.em.fork();
      const batch = await loadBatch(em, input.batchId);
      if (batch.status === 'running' || batch.status === 'expanding') {
        batch.status = input.cancelled ? 'cancelled' : 'completed';
        batch.completedAt = new Date();
        await em.flush();
      }
      const counts = await batchCounts(em, batch.id);
      log.info({ batch_id: batch.id, account_id: batch.accountId, status: batch.status, ...counts }, 'batch ended');
      return counts;
    },

    /** batch.completed's body (built once) and its targets: the account's subscribed endpoints and the batch's webhook_url. */
    async planBatchEvent(input: { batchId: string }): Promise<EventPlan> {
      const em = orm.em.fork();
      const batch = await loadBatch(em, input.batchId);
      const event = 'batch.completed';
      const body = JSON.stringify({
        event,
        timestamp: new Date().toISOString(),
        data: {
          batch_id: batch.id,
          status: batch.status,
          operation: batch.operation,
          counts: await batchCounts(em, batch.id),
          error: batch.error,
          subscription_id: batch.subscriptionId,
          created_at: batch.createdAt.toISOString(),
          completed_at: batch.completedAt?.toISOString() ?? null,
        },
      });
      const targets: EventTarget[] = (await subscribedEndpoints(em, batch.accountId, event)).map((e) => ({ key: `ep${e.id}`, webhookId: e.id, url: e.url }));
      if (batch.webhookUrl) targets.push({ key: 'batch', webhookId: null, url: batch.webhookUrl });
      return { accountId: batch.accountId, body, targets, scheduleMs: config.webhookRetryScheduleMs };
    },
  };
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
