import { EntitySchema } from '@mikro-orm/core';

/** Fixed one-minute request counters, shared by every API process through the database. */
export class RateLimitCounter {
  bucket!: string;
  windowStart!: number;
  count!: number;
}

export const RateLimitCounterSchema = new EntitySchema<RateLimitCounter>({
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

export const ServerSecretSchema = new EntitySchema<ServerSecret>({
  class: ServerSecret,
  tableName: 'server_secrets',
  properties: {
    name: { type: 'string', primary: true, length: 64 },
    value: { type: 'text' },
  },
});
