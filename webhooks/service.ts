// Webhook endpoints of an account, their delivery log and the test call.
import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { Account } from '../accounts/entity';
import { newWebhookSecret } from '../accounts/repository';
import { WebhookDelivery, WebhookEndpoint } from './entity';
import { findAccountEndpoint, recordAttempt } from './repository';
import { attemptDelivery } from './attempt';
import { addressProblem, urlHost } from '../lib/address-policy';
import { DomainError } from '../lib/errors';
import { MAX_ENDPOINTS_PER_ACCOUNT, type WebhookEvent } from './events';
import type { ApiDeps } from '../api/context';
import { afterCursor, page } from '../lib/cursor';

export function presentEndpoint(e: WebhookEndpoint, withSecret = false) {
  return { id: e.id, url: e.url, ...(withSecret ? { secret: e.secret } : {}), events: e.events, is_active: e.isActive, created_at: e.createdAt.toISOString() };
}

/** The delivery record as the API shows it (docs/api.md, webhooks). */
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

/** A literal private address is refused at once; a hostname is checked at connect time (its DNS may change). */
function assertTarget(url: string, allowPrivate: boolean): void {
  const { host, literal } = urlHost(url);
  if (!allowPrivate && literal && addressProblem(host)) {
    throw DomainError.invalidField('url', `points to ${host}, a private or reserved address, which is not allowed`);
  }
}

export async function loadEndpoint(em: EntityManager, account: Account, rawId: string): Promise<WebhookEndpoint> {
  const endpoint = await findAccountEndpoint(em, account.id, rawId);
  if (!endpoint) throw DomainError.notFound(`No webhook endpoint with id ${rawId} in this account`);
  return endpoint;
}

export async function createEndpoint(em: EntityManager, deps: Pick<ApiDeps, 'config'>, account: Account, input: { url: string; events: WebhookEvent[] }): Promise<WebhookEndpoint> {
  assertTarget(input.url, deps.config.allowPrivateNetwork);
  const count = await em.count(WebhookEndpoint, { accountId: account.id });
  if (count >= MAX_ENDPOINTS_PER_ACCOUNT) throw DomainError.invalid(`An account may have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one first`);
  const endpoint = em.create(WebhookEndpoint, { accountId: account.id, url: input.url, secret: newWebhookSecret(), events: input.events, isActive: true, createdAt: new Date() });
  await em.flush();
  return endpoint;
}

export async function updateEndpoint(
  em: EntityManager,
  deps: Pick<ApiDeps, 'config'>,
  endpoint: WebhookEndpoint,
  input: { url?: string; events?: WebhookEvent[]; is_active?: boolean },
): Promise<WebhookEndpoint> {
  if (input.url !== undefined) {
    assertTarget(input.url, deps.config.allowPrivateNetwork);
    endpoint.url = input.url;
  }
  if (input.events !== undefined) endpoint.events = input.events;
  if (input.is_active !== undefined) endpoint.isActive = input.is_active;
  await em.flush();
  return endpoint;
}

export async function deleteEndpoint(em: EntityManager, endpoint: WebhookEndpoint): Promise<void> {
  em.remove(endpoint);
  await em.flush();
}

export async function listEndpoints(em: EntityManager, account: Account): Promise<WebhookEndpoint[]> {
  return em.find(WebhookEndpoint, { accountId: account.id }, { orderBy: { id: 'asc' } });
}

/** The endpoint's delivery log, newest first, keyset-paged like the job list. */
export async function deliveryPage(em: EntityManager, endpoint: WebhookEndpoint, query: { cursor?: string; limit: number }) {
  const where = { webhookId: endpoint.id, accountId: endpoint.accountId, ...(query.cursor ? afterCursor(query.cursor) : {}) };
  const rows = await em.find(WebhookDelivery, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: query.limit + 1 });
  const p = page(rows, query.limit);
  return { ...p, items: p.items.map(presentDelivery) };
}

/** Sends a signed synthetic job.completed to the endpoint now (one attempt) and logs it like a real one. */
export async function sendTestDelivery(em: EntityManager, deps: Pick<ApiDeps, 'config'>, endpoint: WebhookEndpoint): Promise<WebhookDelivery> {
  const jobId = crypto.randomUUID();
  const now = new Date();
  const body = JSON.stringify({
    event: 'job.completed',
    timestamp: now.toISOString(),
    data: {
      job_id: jobId,
      job_type: 'download',
      status: 'completed',
      source_url: 'https://example.com/watch/test-event',
      download_url: null,
      files: [],
      result_data: { title: 'Test event from mediasvc', duration: 0, format: 'mp4', filesize: 0 },
      credits_charged: 0,
      created_at: now.toISOString(),
      completed_at: now.toISOString(),
    },
  });
  const target = { deliveryId: `whd_test_${jobId}`, accountId: endpoint.accountId, webhookId: endpoint.id, url: endpoint.url, event: 'job.completed', jobId, attempt: 1 };
  const res = await attemptDelivery({ ...target, body, secret: endpoint.secret, startedAtMs: now.getTime(), timeoutMs: deps.config.webhookTimeoutMs, allowPrivate: deps.config.allowPrivateNetwork });
  const { final: _final, ...outcome } = res;
  return recordAttempt(em, target, { ...outcome, createdAt: now, nextAttemptAt: null });
}
