import { EntitySchema } from '@mikro-orm/core';

export const PLANS = {
  free: { requestsPerMinute: 10, monthlyCredits: 25 },
  starter: { requestsPerMinute: 60, monthlyCredits: 1_000 },
  pro: { requestsPerMinute: 200, monthlyCredits: 2_000 },
  growth: { requestsPerMinute: 500, monthlyCredits: 10_000 },
  business: { requestsPerMinute: 1_000, monthlyCredits: 35_000 },
  // the contract's custom plan "with higher limits"; its figures are set here until sales sets them per account
  enterprise: { requestsPerMinute: 10_000, monthlyCredits: 100_000 },
} as const;
export type PlanName = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

export class Account {
  id!: string;
  name!: string;
  plan!: PlanName;
  /** Signs deliveries to per-job webhook_url targets. */
  webhookSecret!: string;
  createdAt: Date = new Date();
  // The `balance` column is not mapped: only db/credits.repository.ts moves it, with each ledger line.
}

export const AccountEntitySchema = new EntitySchema<Account>({
  class: Account,
  tableName: 'accounts',
  properties: {
    id: { type: 'string', primary: true, length: 36 },
    name: { type: 'string' },
    plan: { type: 'string', length: 16 },
    webhookSecret: { type: 'string' },
    createdAt: { type: 'datetime' },
  },
});
