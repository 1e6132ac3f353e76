import { EntitySchema } from '@mikro-orm/core';

export class ApiKey {
  id!: string;
  accountId!: string;
  name!: string;
  /** The first 8 characters of the key, kept for display. */
  prefix!: string;
  /** SHA-256 hex of the full key; the key itself is never stored. */
  hash!: string;
  isActive = true;
  createdAt: Date = new Date();
  lastUsedAt: Date | null = null;
}

export const ApiKeyEntitySchema = new EntitySchema<ApiKey>({
  class: ApiKey,
  tableName: 'api_keys',
  properties: {
    id: { type: 'string', primary: true, length: 36 },
    accountId: { type: 'string', length: 36, index: true },
    name: { type: 'string' },
    prefix: { type: 'string', length: 8 },
    hash: { type: 'string', length: 64, unique: true },
    isActive: { type: 'boolean' },
    createdAt: { type: 'datetime' },
    lastUsedAt: { type: 'datetime', nullable: true },
  },
});

/** Requests made with one key on one UTC day. */
export class ApiKeyUsage {
  keyId!: string;
  day!: string;
  requestCount = 0;
}

export const ApiKeyUsageEntitySchema = new EntitySchema<ApiKeyUsage>({
  class: ApiKeyUsage,
  tableName: 'api_key_usage',
  properties: {
    keyId: { type: 'string', primary: true, length: 36 },
    day: { type: 'string', primary: true, length: 10 },
    requestCount: { type: 'integer' },
  },
});
