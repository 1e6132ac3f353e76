import type { EntityManager } from '@mikro-orm/core';
import { PLANS, type Account } from './entity';
import { currentBalance, usageByJobType } from '../credits/repository';
import { accountJobCounts } from '../jobs/repository';

/** First instant of the next calendar month (UTC): when the monthly allowance is topped up again. */
export function nextTopUp(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/**
 * GET /v1/account (beyond the contract): plan, limits, balance, this month's usage by job type (every
 * one of `jobTypes`, the registry's, and info reads), jobs running and queued.
 */
export async function accountSummary<T extends string>(em: EntityManager, account: Account, jobTypes: readonly T[], now = new Date()) {
  const plan = PLANS[account.plan];
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const used = await usageByJobType(em, account.id, monthStart);
  const jobs = await accountJobCounts(em, account.id);
  const usage = Object.fromEntries([...jobTypes, 'info'].map((t) => [t, used[t] ?? 0])) as Record<T | 'info', number>;
  return {
    account_id: account.id,
    name: account.name,
    plan: account.plan,
    rate_limit_per_minute: plan.requestsPerMinute,
    balance: await currentBalance(em, account.id),
    monthly_credits: plan.monthlyCredits,
    next_topup_at: nextTopUp(now).toISOString(),
    usage_this_month: usage,
    max_running_jobs: plan.maxRunningJobs,
    running_jobs: jobs.running,
    queued_jobs: jobs.queued,
  };
}
