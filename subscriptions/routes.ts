// /v1/subscriptions: create, read, list, update, delete, check now; with their OpenAPI entries.
import Router from '@koa/router';
import { z } from 'zod';
import type { ApiDeps, ApiState } from '../api/context';
import { accountOf } from '../api/context';
import { errorResponses, json, registry } from '../api/openapi';
import { PageQuerySchema } from '../api/schemas';
import { jsonBody } from '../api/validation';
import { parseInput } from '../lib/validation';
import { CreateSubscriptionSchema, SubscriptionListSchema, SubscriptionSchema, UpdateSubscriptionSchema } from './schemas';
import { checkSubscriptionNow, createSubscription, deleteSubscription, getSubscription, listSubscriptions, updateSubscription } from './service';

const IdParam = z.object({ subscription_id: z.uuid() });

registry.registerPath({
  method: 'post',
  path: '/v1/subscriptions',
  operationId: 'createSubscription',
  summary: 'Watch a channel, playlist or feed: every check (a Temporal Schedule) runs the operation on the items it has not seen, as a batch (free; each item job its own price)',
  request: { body: { required: true, ...json(CreateSubscriptionSchema) } },
  responses: { 201: { description: 'The subscription', ...json(SubscriptionSchema) }, ...errorResponses(400, 401, 403, 415, 422, 429, 503) },
});
registry.registerPath({ method: 'get', path: '/v1/subscriptions', operationId: 'listSubscriptions', summary: 'List subscriptions, newest first (free)', request: { query: PageQuerySchema }, responses: { 200: { description: 'A page of subscriptions', ...json(SubscriptionListSchema) }, ...errorResponses(401, 403, 422, 429) } });
registry.registerPath({ method: 'get', path: '/v1/subscriptions/{subscription_id}', operationId: 'getSubscription', summary: 'Read a subscription (free)', request: { params: IdParam }, responses: { 200: { description: 'The subscription', ...json(SubscriptionSchema) }, ...errorResponses(401, 403, 404, 429) } });
registry.registerPath({
  method: 'patch',
  path: '/v1/subscriptions/{subscription_id}',
  operationId: 'updateSubscription',
  summary: 'Pause or resume a subscription, change its interval, or the parameters of future items (free)',
  request: { params: IdParam, body: { required: true, ...json(UpdateSubscriptionSchema) } },
  responses: { 200: { description: 'The subscription', ...json(SubscriptionSchema) }, ...errorResponses(400, 401, 403, 404, 415, 422, 429, 503) },
});
registry.registerPath({ method: 'delete', path: '/v1/subscriptions/{subscription_id}', operationId: 'deleteSubscription', summary: 'Delete a subscription, its Schedule and its archive (free; batches it made stay)', request: { params: IdParam }, responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403, 404, 429, 503) } });
registry.registerPath({
  method: 'post',
  path: '/v1/subscriptions/{subscription_id}/check',
  operationId: 'checkSubscription',
  summary: 'Check a subscription now, besides its Schedule (free)',
  request: { params: IdParam },
  responses: { 202: { description: 'The check was started', ...json(SubscriptionSchema) }, ...errorResponses(401, 403, 404, 409, 429, 503) },
});

export function subscriptionsRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.post('/v1/subscriptions', async (ctx) => {
    const sub = await createSubscription(ctx.state.em, deps, accountOf(ctx), jsonBody(ctx));
    ctx.status = 201;
    ctx.set('Location', `/v1/subscriptions/${sub.subscription_id}`);
    ctx.body = sub;
  });
  router.get('/v1/subscriptions', async (ctx) => {
    ctx.body = await listSubscriptions(ctx.state.em, accountOf(ctx), parseInput(PageQuerySchema, ctx.query));
  });
  router.get('/v1/subscriptions/:subscription_id', async (ctx) => {
    ctx.body = await getSubscription(ctx.state.em, accountOf(ctx), ctx.params.subscription_id ?? '');
  });
  router.patch('/v1/subscriptions/:subscription_id', async (ctx) => {
    ctx.body = await updateSubscription(ctx.state.em, deps, accountOf(ctx), ctx.params.subscription_id ?? '', jsonBody(ctx));
  });
  router.delete('/v1/subscriptions/:subscription_id', async (ctx) => {
    await deleteSubscription(ctx.state.em, deps, accountOf(ctx), ctx.params.subscription_id ?? '');
    ctx.status = 204;
  });
  router.post('/v1/subscriptions/:subscription_id/check', async (ctx) => {
    ctx.status = 202;
    ctx.body = await checkSubscriptionNow(ctx.state.em, deps, accountOf(ctx), ctx.params.subscription_id ?? '');
  });
  return router;
}
