import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { Account } from '../db/account.entity';
import { WebhookDelivery, WebhookEndpoint } from '../db/webhook.entity';
import { sendWebhook } from '../engines/webhook-sender';
import { deliveryHeaders } from './webhook-signing';

export interface AttemptInput {
  /** Stable per (job, event, target): the `webhook-id` header of every attempt. */
  deliveryId: string;
  accountId: string;
  webhookId: number | null;
  url: string;
  event: string;
  jobId: string;
  /** The exact bytes sent on every attempt. */
  body: string;
  attempt: number;
  /** When the next attempt is due if this one fails; null when none is left. */
  nextAttemptAt: Date | null;
}

export interface AttemptDeps {
  allowPrivateNetwork: boolean;
  timeoutMs: number;
  /** Clock for `webhook-timestamp` and the log; tests inject virtual time. */
  now: () => Promise<number>;
}

/** Signs with the endpoint's secret, or the account's secret for a job's own webhook_url. */
async function secretFor(em: EntityManager, input: Pick<AttemptInput, 'accountId' | 'webhookId'>): Promise<string | null> {
  if (input.webhookId !== null) return (await em.findOne(WebhookEndpoint, input.webhookId))?.secret ?? null;
  return (await em.findOne(Account, input.accountId))?.webhookSecret ?? null;
}

/** One delivery attempt: sign, POST, and write the attempt to the delivery log. */
export async function performAttempt(em: EntityManager, input: AttemptInput, deps: AttemptDeps): Promise<WebhookDelivery> {
  const startedAt = await deps.now();
  const secret = await secretFor(em, input);
  const res = secret
    ? await sendWebhook({ url: input.url, body: input.body, headers: deliveryHeaders(secret, input.deliveryId, input.body, Math.floor(startedAt / 1000)), timeoutMs: deps.timeoutMs, allowPrivate: deps.allowPrivateNetwork })
    : { statusCode: null, responseTimeMs: 0, error: 'the webhook endpoint no longer exists' };
  const ok = res.statusCode !== null && res.statusCode >= 200 && res.statusCode < 300;
  const final = ok || res.statusCode === 410 || !secret;
  return logAttempt(em, input, {
    status: ok ? 'succeeded' : 'failed',
    statusCode: res.statusCode,
    responseTimeMs: res.responseTimeMs,
    error: res.statusCode === 410 ? 'the endpoint answered HTTP 410 Gone; no more attempts' : res.error,
    createdAt: new Date(startedAt),
    nextAttemptAt: final ? null : input.nextAttemptAt,
  });
}

/** Writes one attempt to the delivery log. */
export async function logAttempt(
  em: EntityManager,
  target: Pick<AttemptInput, 'deliveryId' | 'accountId' | 'webhookId' | 'url' | 'event' | 'jobId' | 'attempt'>,
  outcome: Pick<WebhookDelivery, 'status' | 'statusCode' | 'responseTimeMs' | 'error' | 'createdAt' | 'nextAttemptAt'>,
): Promise<WebhookDelivery> {
  const record = em.create(WebhookDelivery, {
    id: crypto.randomUUID(),
    deliveryId: target.deliveryId,
    accountId: target.accountId,
    webhookId: target.webhookId,
    url: target.url,
    event: target.event,
    jobId: target.jobId,
    attempt: target.attempt,
    ...outcome,
  });
  await em.flush();
  return record;
}

/** The delivery record as the API shows it (decisions.md field names). */
export function presentDelivery(d: WebhookDelivery) {
  return {
    id: d.id,
    delivery_id: d.deliveryId,
    webhook_id: d.webhookId,
    url: d.url,
    event: d.event,
    job_id: d.jobId,
    attempt: d.attempt,
    status: d.status,
    status_code: d.statusCode,
    response_time_ms: d.responseTimeMs,
    error: d.error,
    created_at: d.createdAt.toISOString(),
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
  };
}
