import { EntitySchema } from '@mikro-orm/core';

/** Fixed one-minute request counters, shared by every API process through the database. */
export class RateLimitCounter {
  bucket!: string;
  windowStart!: number;
  count!: number;
}

export const RateLimitCounterEntitySchema = new EntitySchema<RateLimitCounter>({
  class: RateLimitCounter,
  tableName: 'rate_limit_counters',
  properties: {
    bucket: { type: 'string', primary: true, length: 80 },
    windowStart: { type: 'bigint', primary: true },
    count: { type: 'integer' },
  },
});

/** Server-wide secrets (file-link signing key) generated once, so every API process agrees. */
export class ServerSecret {
  name!: string;
  value!: string;
}

export const ServerSecretEntitySchema = new EntitySchema<ServerSecret>({
  class: ServerSecret,
  tableName: 'server_secrets',
  properties: {
    name: { type: 'string', primary: true, length: 64 },
    value: { type: 'text' },
  },
});

/** A create call's response, kept 24 h per (account, Idempotency-Key) so a retried request is not run twice. */
export class IdempotencyRecord {
  accountId!: string;
  key!: string;
  requestHash!: string;
  /** null while the first request is still running. */
  status: number | null = null;
  responseBody: string | null = null;
  createdAt: Date = new Date();
}

export const IdempotencyRecordEntitySchema = new EntitySchema<IdempotencyRecord>({
  class: IdempotencyRecord,
  tableName: 'idempotency_keys',
  properties: {
    accountId: { type: 'string', primary: true, length: 36 },
    key: { type: 'string', primary: true, length: 255 },
    requestHash: { type: 'string', length: 64 },
    status: { type: 'integer', nullable: true },
    responseBody: { type: 'text', nullable: true },
    createdAt: { type: 'datetime' },
  },
});
