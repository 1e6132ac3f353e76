import type { MikroORM } from '@mikro-orm/core';
import { CompleteAsyncError, Context } from '@temporalio/activity';
import { setTimeout as delay } from 'node:timers/promises';
import { Job } from '../jobs/entity';
import { serverSecret } from '../db/secrets.repository';
import { WebhookEndpoint } from './entity';
import { attemptLogged, clearNextAttempt, deliverySecret, deliverySucceeded, recordAttempt, recordDelivered, subscribedEndpoints } from './repository';
import { attemptDelivery } from './attempt';
import type { Config } from '../lib/config';
import { dependencyFault } from '../lib/dependency-faults';
import { log } from '../lib/logger';
import { webhookDeliveries, webhookLatency } from '../lib/metrics';
import { FileLinks } from '../lib/file-links';
import { jobFiles } from '../jobs/outputs';
import type { DeliveryTarget, WebhookEvent } from './events';

export interface EventTarget {
  /** Part of the child workflow id: `ep{id}` for an endpoint, `job` for the job's own webhook_url. */
  key: string;
  webhookId: number | null;
  url: string;
}

export interface EventPlan {
  accountId: string;
  /** The exact body every attempt to every target sends. */
  body: string;
  targets: EventTarget[];
  /** Attempt offsets from the first attempt, ms. */
  scheduleMs: number[];
}

export interface AttemptResult {
  outcome: 'succeeded' | 'failed' | 'gone';
  startedAtMs: number;
  finishedAtMs: number;
}

/**
 * Where an attempt goes when its endpoint has not answered within `holdMs`: the attempt gives its
 * worker slot back and its answer is awaited there, then reported to Temporal (async completion).
 */
export interface SlowAnswers {
  holdMs: number;
  /** Completes the activity of `taskToken` with what `result` settles to. */
  complete(taskToken: Uint8Array, result: Promise<AttemptResult>): void;
}

export interface WebhookDeps {
  orm: MikroORM;
  config: Pick<Config, 'allowPrivateNetwork' | 'publicBaseUrl' | 'webhookRetryScheduleMs' | 'webhookTimeoutMs'>;
  /** Clock; tests inject the time-skipping server's virtual time. */
  now?: () => Promise<number>;
  /**
   * Slow endpoints' attempts leave their worker slot after a while (the webhooks queue's worker):
   * otherwise one account's slow endpoints fill every slot, in step, and another account's delivery
   * waits for a whole window (up to 10 s) before a slot frees. Without it an attempt holds its slot.
   */
  slowAnswers?: SlowAnswers;
}

/** Webhook activities for the `control` queue: planning an event, one attempt, target checks. */
export function createWebhookActivities(deps: WebhookDeps) {
  const { orm, config } = deps;
  const now = deps.now ?? (async () => Date.now());
  let links: FileLinks | null = null;

  /** Sends one attempt and writes it to the delivery log. */
  async function attemptAndRecord(input: AttemptInput): Promise<AttemptResult> {
    const startedAtMs = await now();
    const { firstAttemptAtMs, nextOffsetMs, body, ...target } = input;
    const em = orm.em.fork();
    // an earlier attempt whose answer never reached the workflow (Temporal away, a lost completion) may
    // have been received: the log says so, and the target is not sent the event again
    if (target.attempt > 1 && (await deliverySucceeded(em, target.deliveryId))) return { outcome: 'succeeded', startedAtMs, finishedAtMs: startedAtMs };
    const secret = await deliverySecret(em, target);
    const res = await attemptDelivery({ deliveryId: target.deliveryId, url: target.url, body, secret, startedAtMs, timeoutMs: config.webhookTimeoutMs, allowPrivate: config.allowPrivateNetwork });
    const nextAttemptAt = nextOffsetMs === null || res.final ? null : new Date((firstAttemptAtMs ?? startedAtMs) + nextOffsetMs);
    const { final: _final, ...outcome } = res;
    const record = { ...outcome, createdAt: new Date(startedAtMs), nextAttemptAt };
    await recordAttempt(em, target, record).catch((err: unknown) => {
      // the target has the event: a database away now must not make the workflow send it a second time,
      // and the log must come to say it was received, for the attempts that check it
      if (res.status !== 'succeeded' || !dependencyFault(err)) throw err;
      log.warn({ err, delivery_id: target.deliveryId, job_id: target.jobId }, 'webhook delivered, but the attempt could not be recorded yet; recording it once the database is back');
      recordDeliveredLater(target, record);
    });
    const result = res.status === 'succeeded' ? 'delivered' : res.final ? 'failed' : nextAttemptAt ? 'retry' : 'exhausted';
    webhookDeliveries.inc({ event: target.event, outcome: result });
    if (res.statusCode !== null) webhookLatency.observe({ event: target.event }, res.responseTimeMs / 1000);
    log.info({ job_id: target.jobId, account_id: target.accountId, delivery_id: target.deliveryId, event: target.event, attempt: target.attempt, outcome: result, http_status: res.statusCode, ms: res.responseTimeMs, ...(res.error ? { error: res.error } : {}) }, 'webhook attempt');
    return { outcome: res.status === 'succeeded' ? 'succeeded' : res.statusCode === 410 ? 'gone' : 'failed', startedAtMs, finishedAtMs: await now() };
  }

  /** Writes a received attempt in the background, retried until the database takes it (for up to 15 minutes). */
  function recordDeliveredLater(target: DeliveryTarget, record: Parameters<typeof recordDelivered>[2]): void {
    const giveUpAt = Date.now() + 15 * 60_000;
    const attempt = async (waitMs: number): Promise<void> => {
      await delay(waitMs);
      try {
        await recordDelivered(orm.em.fork(), target, record);
      } catch (err) {
        if (Date.now() < giveUpAt) return attempt(Math.min(waitMs * 2, 10_000));
        log.error({ err, delivery_id: target.deliveryId, job_id: target.jobId }, 'a received webhook attempt could not be recorded');
      }
    };
    void attempt(500);
  }

  return {
    /** Builds the event body once and lists its targets: subscribed active endpoints plus the job's webhook_url. */
    async planJobEvent(input: { jobId: string; event: WebhookEvent }): Promise<EventPlan> {
      const em = orm.em.fork();
      const job = await em.findOneOrFail(Job, input.jobId);
      links ??= new FileLinks(await serverSecret(em, 'file-links'), config.publicBaseUrl);
      const completed = job.status === 'completed';
      const body = JSON.stringify({
        event: input.event,
        timestamp: new Date(await now()).toISOString(),
        data: {
          job_id: job.id,
          job_type: job.jobType,
          status: job.status,
          source_url: job.sourceUrl,
          download_url: completed && job.outputFile && job.expiresAt ? links.url(job.id, job.expiresAt) : null,
          files: jobFiles(job, links),
          result_data: completed ? job.resultData : null,
          credits_charged: job.creditsCharged,
          created_at: job.createdAt.toISOString(),
          completed_at: job.completedAt?.toISOString() ?? null,
          // beyond the documented minimum: why the job failed, without polling it
          ...(job.status === 'failed' ? { error_message: job.errorMessage, failure_kind: job.failureKind } : {}),
        },
      });
      const endpoints = await subscribedEndpoints(em, job.accountId, input.event);
      const targets: EventTarget[] = endpoints.map((e) => ({ key: `ep${e.id}`, webhookId: e.id, url: e.url }));
      if (job.webhookUrl) targets.push({ key: 'job', webhookId: null, url: job.webhookUrl });
      return { accountId: job.accountId, body, targets, scheduleMs: config.webhookRetryScheduleMs };
    },

    /** One attempt; never retried by Temporal (the workflow's durable timers schedule retries). */
    async attemptDelivery(input: AttemptInput): Promise<AttemptResult> {
      const result = attemptAndRecord(input);
      if (!deps.slowAnswers) return result;
      const held = new AbortController();
      const answered = await Promise.race([result, delay(deps.slowAnswers.holdMs, null, { signal: held.signal }).catch(() => null)]).finally(() => held.abort());
      if (answered) return answered;
      const { info, cancellationSignal } = Context.current();
      // a stopping worker cancels its running attempts: this one finishes on its slot, which the stop waits for
      if (cancellationSignal.aborted) return result;
      deps.slowAnswers.complete(info.taskToken, result);
      throw new CompleteAsyncError();
    },
    /**
     * Logs an attempt whose worker stopped, or whose answer was lost, before reporting it (kept as is if
     * it was logged after all). True when the log says some attempt of the delivery was received.
     */
    async recordLostAttempt(input: DeliveryTarget & { nextAttemptAtMs: number | null }): Promise<boolean> {
      const em = orm.em.fork();
      if (await deliverySucceeded(em, input.deliveryId)) return true;
      if (await attemptLogged(em, input.deliveryId, input.attempt)) return false;
      const { nextAttemptAtMs, ...target } = input;
      await recordAttempt(em, target, {
        status: 'failed',
        statusCode: null,
        responseTimeMs: null,
        error: 'the worker stopped during this attempt, or its answer was lost; its outcome is unknown',
        createdAt: new Date(await now()),
        nextAttemptAt: nextAttemptAtMs === null ? null : new Date(nextAttemptAtMs),
      });
      return false;
    },

    /** False when the endpoint was deleted or deactivated; then no attempt is announced as pending any more. */
    async deliveryTargetActive(input: { deliveryId: string; webhookId: number | null }): Promise<boolean> {
      if (input.webhookId === null) return true;
      const em = orm.em.fork();
      const endpoint = await em.findOne(WebhookEndpoint, input.webhookId);
      if (endpoint?.isActive) return true;
      await clearNextAttempt(em, input.deliveryId);
      return false;
    },
  };
}

type AttemptInput = DeliveryTarget & { body: string; firstAttemptAtMs: number | null; nextOffsetMs: number | null };

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
