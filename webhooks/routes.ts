import Router from '@koa/router';
import { z } from 'zod';
import { TargetUrl } from '../operations/fields';
import { WEBHOOK_EVENTS } from './events';
import type { ApiContext, ApiDeps, ApiState } from '../api/context';
import { accountOf } from '../api/context';
import { errorResponses, json, registry } from '../api/openapi';
import { PageQuerySchema, Timestamp } from '../api/schemas';
import {
  createEndpoint,
  deleteEndpoint,
  deliveryPage,
  listEndpoints,
  loadEndpoint,
  presentDelivery,
  presentEndpoint,
  sendTestDelivery,
  updateEndpoint,
} from './service';
import { jsonBody } from '../api/validation';
import { parseInput } from '../lib/validation';

const Events = z
  .array(z.enum(WEBHOOK_EVENTS, { error: `must be ${WEBHOOK_EVENTS.join(' or ')}` }))
  .max(WEBHOOK_EVENTS.length * 4, 'lists too many events')
  .transform((a) => [...new Set(a)])
  .meta({ description: 'Event kinds to receive; [] means every kind' });

export const CreateWebhookSchema = z.strictObject({ url: TargetUrl, events: Events.default([]) }).meta({ id: 'WebhookCreate' });
export const UpdateWebhookSchema = z
  .strictObject({ url: TargetUrl.optional(), events: Events.optional(), is_active: z.boolean({ error: 'must be true or false' }).optional() })
  .refine((v) => v.url !== undefined || v.events !== undefined || v.is_active !== undefined, { message: 'send at least one of url, events, is_active' })
  .meta({ id: 'WebhookUpdate', minProperties: 1 });
const WebhookSchema = z
  .object({ id: z.number().int(), url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)), is_active: z.boolean(), created_at: Timestamp, secret: z.string().optional() })
  .meta({ id: 'Webhook' });
const DeliverySchema = z
  .object({
    id: z.string(),
    delivery_id: z.string().meta({ description: 'Beyond: the webhook-id header, shared by all attempts of one event to one target' }),
    webhook_id: z.number().int().nullable(),
    url: z.string(),
    event: z.string(),
    job_id: z.string(),
    attempt: z.number().int().min(1).max(4),
    status: z.enum(['pending', 'succeeded', 'failed']),
    status_code: z.number().int().nullable(),
    response_time_ms: z.number().int().nullable(),
    error: z.string().nullable(),
    created_at: Timestamp,
    next_attempt_at: Timestamp.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
const IdParam = z.object({ id: z.string().regex(/^\d{1,12}$/) });

registry.registerPath({ method: 'post', path: '/v1/webhooks', operationId: 'createWebhook', summary: 'Create a webhook endpoint (the response is the only one with its secret; free)', request: { body: { required: true, ...json(CreateWebhookSchema) } }, responses: { 201: { description: 'Created', ...json(WebhookSchema) }, ...errorResponses(400, 401, 403, 415, 422, 429) } });
registry.registerPath({ method: 'get', path: '/v1/webhooks', operationId: 'listWebhooks', summary: 'List webhook endpoints', responses: { 200: { description: 'Endpoints', ...json(z.object({ items: z.array(WebhookSchema) })) }, ...errorResponses(401, 403, 429) } });
registry.registerPath({ method: 'get', path: '/v1/webhooks/{id}', operationId: 'getWebhook', summary: 'Read a webhook endpoint', request: { params: IdParam }, responses: { 200: { description: 'Endpoint', ...json(WebhookSchema) }, ...errorResponses(401, 403, 404, 429) } });
registry.registerPath({ method: 'patch', path: '/v1/webhooks/{id}', operationId: 'updateWebhook', summary: 'Update url, events or is_active', request: { params: IdParam, body: { required: true, ...json(UpdateWebhookSchema) } }, responses: { 200: { description: 'Endpoint', ...json(WebhookSchema) }, ...errorResponses(400, 401, 403, 404, 415, 422, 429) } });
registry.registerPath({ method: 'delete', path: '/v1/webhooks/{id}', operationId: 'deleteWebhook', summary: 'Delete a webhook endpoint', request: { params: IdParam }, responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403, 404, 429) } });
registry.registerPath({ method: 'get', path: '/v1/webhooks/{id}/deliveries', operationId: 'listWebhookDeliveries', summary: 'Delivery attempts, newest first, cursor-paged', request: { params: IdParam, query: PageQuerySchema }, responses: { 200: { description: 'Attempts', ...json(z.object({ items: z.array(DeliverySchema), next_cursor: z.string().nullable(), has_more: z.boolean() })) }, ...errorResponses(401, 403, 404, 422, 429) } });
registry.registerPath({ method: 'post', path: '/v1/webhooks/{id}/test', operationId: 'testWebhook', summary: 'Send a signed synthetic job.completed and log it', request: { params: IdParam }, responses: { 200: { description: 'The delivery record', ...json(DeliverySchema) }, ...errorResponses(401, 403, 404, 429) } });

export function webhooksRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  const load = (ctx: ApiContext) => loadEndpoint(ctx.state.em, accountOf(ctx), ctx.params.id ?? '');

  router.post('/v1/webhooks', async (ctx) => {
    const endpoint = await createEndpoint(ctx.state.em, deps, accountOf(ctx), parseInput(CreateWebhookSchema, jsonBody(ctx)));
    ctx.status = 201;
    ctx.set('Location', `/v1/webhooks/${endpoint.id}`);
    ctx.body = presentEndpoint(endpoint, true);
  });

  router.get('/v1/webhooks', async (ctx) => {
    ctx.body = { items: (await listEndpoints(ctx.state.em, accountOf(ctx))).map((e) => presentEndpoint(e)) };
  });

  router.get('/v1/webhooks/:id', async (ctx) => {
    ctx.body = presentEndpoint(await load(ctx));
  });

  router.patch('/v1/webhooks/:id', async (ctx) => {
    const endpoint = await load(ctx);
    ctx.body = presentEndpoint(await updateEndpoint(ctx.state.em, deps, endpoint, parseInput(UpdateWebhookSchema, jsonBody(ctx))));
  });

  router.delete('/v1/webhooks/:id', async (ctx) => {
    await deleteEndpoint(ctx.state.em, await load(ctx));
    ctx.status = 204;
  });

  router.get('/v1/webhooks/:id/deliveries', async (ctx) => {
    const endpoint = await load(ctx);
    ctx.body = await deliveryPage(ctx.state.em, endpoint, parseInput(PageQuerySchema, ctx.query));
  });

  router.post('/v1/webhooks/:id/test', async (ctx) => {
    ctx.body = presentDelivery(await sendTestDelivery(ctx.state.em, deps, await load(ctx)));
  });

  return router;
}
