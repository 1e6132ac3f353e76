import { EntitySchema } from '@mikro-orm/core';

import type { WebhookEvent } from './events';
import { purposeOf, SealedSecretType } from '../db/sealed-secrets';

export class WebhookEndpoint {
  id!: number;
  accountId!: string;
  url!: string;
  /** `whsec_` + base64 of 32 random bytes; returned only at creation; sealed in the database. */
  secret!: string;
  /** Subscribed kinds; empty means all. */
  events: WebhookEvent[] = [];
  isActive = true;
  createdAt: Date = new Date();
}

export const WebhookEndpointEntitySchema = new EntitySchema<WebhookEndpoint>({
  class: WebhookEndpoint,
  tableName: 'webhook_endpoints',
  indexes: [{ properties: ['accountId'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    accountId: { type: 'string', length: 36 },
    url: { type: 'text' },
    secret: { type: new SealedSecretType(purposeOf('webhook_endpoints', 'secret')) },
    events: { type: 'json' },
    isActive: { type: 'boolean' },
    createdAt: { type: 'datetime' },
  },
});

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One delivery attempt. Attempts of one event to one target share `deliveryId` (the webhook-id header). */
export class WebhookDelivery {
  id!: string;
  deliveryId!: string;
  accountId!: string;
  /** null for a job's own webhook_url. */
  webhookId: number | null = null;
  url!: string;
  event!: string;
  jobId!: string;
  attempt!: number;
  status: DeliveryStatus = 'pending';
  statusCode: number | null = null;
  responseTimeMs: number | null = null;
  error: string | null = null;
  createdAt: Date = new Date();
  nextAttemptAt: Date | null = null;
}

export const WebhookDeliveryEntitySchema = new EntitySchema<WebhookDelivery>({
  class: WebhookDelivery,
  tableName: 'webhook_deliveries',
  indexes: [{ properties: ['webhookId', 'createdAt', 'id'] }, { properties: ['deliveryId'] }],
  uniques: [{ properties: ['deliveryId', 'attempt'] }],
  properties: {
    id: { type: 'string', primary: true, length: 36 },
    deliveryId: { type: 'string', length: 120 },
    accountId: { type: 'string', length: 36 },
    webhookId: { type: 'integer', nullable: true },
    url: { type: 'text' },
    event: { type: 'string', length: 32 },
    jobId: { type: 'string', length: 36 },
    attempt: { type: 'integer' },
    status: { type: 'string', length: 16 },
    statusCode: { type: 'integer', nullable: true },
    responseTimeMs: { type: 'integer', nullable: true },
    error: { type: 'text', nullable: true },
    createdAt: { type: 'datetime', length: 3 },
    nextAttemptAt: { type: 'datetime', nullable: true },
  },
});
