// Webhook endpoints and the delivery log.
import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { Account } from '../accounts/entity';
import type { DeliveryTarget } from './events';
import { WebhookDelivery, WebhookEndpoint } from './entity';

export type AttemptRecord = Pick<WebhookDelivery, 'status' | 'statusCode' | 'responseTimeMs' | 'error' | 'createdAt' | 'nextAttemptAt'>;

/** The endpoint's secret, or the account's for a job's own webhook_url; null when the endpoint is gone. */
export async function deliverySecret(em: EntityManager, target: Pick<DeliveryTarget, 'accountId' | 'webhookId'>): Promise<string | null> {
  if (target.webhookId !== null) return (await em.findOne(WebhookEndpoint, target.webhookId))?.secret ?? null;
  return (await em.findOne(Account, target.accountId))?.webhookSecret ?? null;
}

/** Writes one attempt to the delivery log. */
export async function recordAttempt(em: EntityManager, target: DeliveryTarget, outcome: AttemptRecord): Promise<WebhookDelivery> {
  const record = em.create(WebhookDelivery, { id: crypto.randomUUID(), ...target, ...outcome });
  await em.flush();
  return record;
}

export async function attemptLogged(em: EntityManager, deliveryId: string, attempt: number): Promise<boolean> {
  return (await em.count(WebhookDelivery, { deliveryId, attempt })) > 0;
}

/** Whether some attempt of this delivery is logged as received by its target. */
export async function deliverySucceeded(em: EntityManager, deliveryId: string): Promise<boolean> {
  return (await em.count(WebhookDelivery, { deliveryId, status: 'succeeded' })) > 0;
}

/**
 * Logs an attempt its target received, over what the log holds for that attempt: a success written
 * late may find the attempt already logged as lost, and the success is what happened.
 */
export async function recordDelivered(em: EntityManager, target: DeliveryTarget, outcome: AttemptRecord): Promise<void> {
  await em.upsert(WebhookDelivery, { id: crypto.randomUUID(), ...target, ...outcome }, { onConflictFields: ['deliveryId', 'attempt'], onConflictExcludeFields: ['id'] });
}

/** No further attempt of this delivery will be made: clear what the log announced. */
export async function clearNextAttempt(em: EntityManager, deliveryId: string): Promise<void> {
  await em.nativeUpdate(WebhookDelivery, { deliveryId, nextAttemptAt: { $ne: null } }, { nextAttemptAt: null });
}

export function findAccountEndpoint(em: EntityManager, accountId: string, rawId: string): Promise<WebhookEndpoint | null> {
  if (!/^\d{1,12}$/.test(rawId)) return Promise.resolve(null);
  return em.findOne(WebhookEndpoint, { id: Number(rawId), accountId });
}

/** Active endpoints of the account subscribed to `event` (an empty list of events means all). */
export async function subscribedEndpoints(em: EntityManager, accountId: string, event: string): Promise<WebhookEndpoint[]> {
  const endpoints = await em.find(WebhookEndpoint, { accountId, isActive: true }, { orderBy: { id: 'asc' } });
  return endpoints.filter((e) => e.events.length === 0 || (e.events as string[]).includes(event));
}
