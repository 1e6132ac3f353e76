import { JOB_TYPES } from '../operations/registry';
import Router from '@koa/router';
import { z } from 'zod';
import type { ApiState } from '../api/context';
import { accountOf } from '../api/context';
import { errorResponses, json, registry } from '../api/openapi';
import { AccountSchema } from '../api/schemas';
import { accountSummary } from './service';

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
    ctx.body = (await accountSummary(ctx.state.em, accountOf(ctx), JOB_TYPES)) satisfies z.infer<typeof AccountSchema>;
  });
  return router;
}
