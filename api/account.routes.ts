import Router from '@koa/router';
import { z } from 'zod';
import { PLAN_NAMES } from '../db/account.entity';
import { JOB_TYPES } from '../lib/jobs';
import type { ApiState } from './context';
import { accountOf } from './context';
import { errorResponses, json, registry } from './openapi';
import { accountSummary } from './services/account.service';

const AccountSchema = z
  .object({
    account_id: z.string(),
    name: z.string(),
    plan: z.enum(PLAN_NAMES as [string, ...string[]]),
    rate_limit_per_minute: z.number().int(),
    balance: z.number().int(),
    monthly_credits: z.number().int(),
    next_topup_at: z.string().meta({ description: 'When the balance is next topped up to monthly_credits (start of the next month, UTC)' }),
    usage_this_month: z.object(Object.fromEntries([...JOB_TYPES, 'info'].map((t) => [t, z.number().int()]))).meta({ description: 'Credits used this month by job type (charges minus refunds)' }),
    max_running_jobs: z.number().int().meta({ description: "How many of the account's jobs the plan processes at once; later ones wait pending, in order" }),
    running_jobs: z.number().int().meta({ description: "The account's jobs processing now" }),
    queued_jobs: z.number().int().meta({ description: "The account's jobs pending: waiting for a running slot or about to start" }),
  })
  .meta({ id: 'Account' });

registry.registerPath({
  method: 'get',
  path: '/v1/account',
  operationId: 'getAccount',
  summary: 'The account behind the key: plan, rate limit, balance, monthly allowance, next top-up, usage this month, jobs running and queued (free; beyond the contract)',
  responses: { 200: { description: 'The account', ...json(AccountSchema) }, ...errorResponses(401, 403, 429) },
});

export function accountRoutes(): Router<ApiState> {
  const router = new Router<ApiState>();
  router.get('/v1/account', async (ctx) => {
    ctx.body = (await accountSummary(ctx.state.em, accountOf(ctx))) satisfies z.infer<typeof AccountSchema>;
  });
  return router;
}
