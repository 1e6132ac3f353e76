import { EntitySchema } from '@mikro-orm/core';
import type { PlanName } from '../lib/plans';
import { purposeOf, SealedSecretType } from '../db/sealed-secrets';

// the plan table lives with the other plan rules; re-exported for the callers that read it from here
export { PLANS, PLAN_NAMES, type PlanName } from '../lib/plans';

export class Account {
  id!: string;
  name!: string;
  plan!: PlanName;
  /** Signs deliveries to per-job webhook_url targets; sealed in the database. */
  webhookSecret!: string;
  createdAt: Date = new Date();
  // The `balance` column is not mapped: only credits/repository.ts moves it, with each ledger line.
}

export const AccountEntitySchema = new EntitySchema<Account>({
  class: Account,
  tableName: 'accounts',
  properties: {
    id: { type: 'string', primary: true, length: 36 },
    name: { type: 'string' },
    plan: { type: 'string', length: 16 },
    webhookSecret: { type: new SealedSecretType(purposeOf('accounts', 'webhook_secret')), fieldName: 'webhook_secret' },
    createdAt: { type: 'datetime' },
  },
});
