import type { EntityManager } from '@mikro-orm/core';
import { PLANS, type Account } from '../../db/account.entity';
import { currentBalance, usageByJobType } from '../../db/credits.repository';
import { accountJobCounts } from '../../jobs/repository';
import { JOB_TYPES } from '../../operations/registry';

/** First instant of the next calendar month (UTC): when the monthly allowance is topped up again. */
export function nextTopUp(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/** GET /v1/account (beyond the contract): plan, limits, balance, this month's usage by job type, jobs running and queued. */
export async function accountSummary(em: EntityManager, account: Account, now = new Date()) {
  const plan = PLANS[account.plan];
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const used = await usageByJobType(em, account.id, monthStart);
  const jobs = await accountJobCounts(em, account.id);
  const usage = Object.fromEntries([...JOB_TYPES, 'info'].map((t) => [t, used[t] ?? 0])) as Record<(typeof JOB_TYPES)[number] | 'info', number>;
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
