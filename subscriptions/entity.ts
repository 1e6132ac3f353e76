import { EntitySchema } from '@mikro-orm/core';

export class Subscription {
  id!: string;
  accountId!: string;
  url!: string;
  /** An async operation's job type. */
  operation!: string;
  /** The operation's fields for future items, without url. */
  parameters!: Record<string, unknown>;
  checkEverySeconds!: number;
  /** Only items published after this run; undated items present at the first check are only recorded as seen. */
  startAfter!: Date;
  webhookUrl: string | null = null;
  paused = false;
  lastCheckedAt: Date | null = null;
  lastError: string | null = null;
  /** Consecutive failed checks (0 after one that worked). */
  failures = 0;
  /** Checks that found the source (the first one records what was already there). */
  checks = 0;
  createdAt: Date = new Date();
}

export const SubscriptionEntitySchema = new EntitySchema<Subscription>({
  class: Subscription,
  tableName: 'subscriptions',
  indexes: [{ properties: ['accountId', 'createdAt', 'id'] }],
  properties: {
    id: { type: 'string', primary: true, length: 36 },
    accountId: { type: 'string', length: 36 },
    url: { type: 'text' },
    operation: { type: 'string', length: 16 },
    parameters: { type: 'json' },
    checkEverySeconds: { type: 'integer' },
    startAfter: { type: 'datetime' },
    webhookUrl: { type: 'text', nullable: true },
    paused: { type: 'boolean' },
    lastCheckedAt: { type: 'datetime', nullable: true },
    lastError: { type: 'text', nullable: true },
    failures: { type: 'integer' },
    checks: { type: 'integer' },
    createdAt: { type: 'datetime', length: 3 },
  },
});

/** The archive: every item a subscription has seen, by the source's identity of it, so that none runs twice. */
export class SubscriptionItem {
  subscriptionId!: string;
  identity!: string;
  seenAt: Date = new Date();
  /** The check's batch that ran it; null for an item only recorded as seen (there before the subscription). */
  batchId: string | null = null;
}

export const SubscriptionItemEntitySchema = new EntitySchema<SubscriptionItem>({
  class: SubscriptionItem,
  tableName: 'subscription_items',
  properties: {
    subscriptionId: { type: 'string', primary: true, length: 36 },
    identity: { type: 'text', primary: true },
    seenAt: { type: 'datetime' },
    batchId: { type: 'string', length: 36, nullable: true },
  },
});
