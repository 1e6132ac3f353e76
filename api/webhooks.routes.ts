import crypto from 'node:crypto';
import net from 'node:net';
import Router from '@koa/router';
import { z } from 'zod';
import { newWebhookSecret } from '../db/accounts';
import { MAX_ENDPOINTS_PER_ACCOUNT, WEBHOOK_EVENTS, WebhookDelivery, WebhookEndpoint } from '../db/webhook.entity';
import { ApiError } from '../lib/errors';
import { checkUrlSyntax, isPrivateAddress } from '../lib/url-safety';
import { performAttempt, presentDelivery } from '../lib/webhook-delivery';
import type { ApiContext, ApiDeps, ApiState } from './context';
import { accountOf } from './context';
import { afterCursor, page } from './cursor';
import { errorResponses, registry } from './openapi';
import { jsonBody, parseInput } from './validation';

const Events = z.array(z.enum(WEBHOOK_EVENTS)).transform((a) => [...new Set(a)]);

const CreateWebhookSchema = z.object({ url: z.string({ error: 'is required' }).min(1, 'is required'), events: Events.default([]) }).openapi('WebhookCreate');
const UpdateWebhookSchema = z
  .object({ url: z.string().min(1).optional(), events: Events.optional(), is_active: z.boolean().optional() })
  .refine((v) => v.url !== undefined || v.events !== undefined || v.is_active !== undefined, { message: 'send at least one of url, events, is_active' })
  .openapi('WebhookUpdate');
const WebhookSchema = z
  .object({ id: z.number().int(), url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)), is_active: z.boolean(), created_at: z.string(), secret: z.string().optional() })
  .openapi('Webhook');
const DeliverySchema = z
  .object({
    id: z.string(),
    delivery_id: z.string().openapi({ description: 'Beyond: the webhook-id header, shared by all attempts of one event to one target' }),
    webhook_id: z.number().int().nullable(),
    url: z.string(),
    event: z.string(),
    job_id: z.string(),
    attempt: z.number().int().min(1).max(4),
    status: z.enum(['pending', 'succeeded', 'failed']),
    status_code: z.number().int().nullable(),
    response_time_ms: z.number().int().nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
    next_attempt_at: z.string().nullable(),
  })
  .openapi('WebhookDelivery');
const PageQuery = z.object({
  cursor: z.string().optional(),
  limit: z.coerce.number().int('must be an integer from 1 to 100').min(1, 'must be at least 1').max(100, 'must be at most 100').default(20),
});
const IdParam = z.object({ id: z.string() });
const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });

registry.registerPath({ method: 'post', path: '/v1/webhooks', summary: 'Create a webhook endpoint (the response is the only one with its secret)', request: { body: json(CreateWebhookSchema) }, responses: { 201: { description: 'Created', ...json(WebhookSchema) }, ...errorResponses(400, 401, 403, 422, 429) } });
registry.registerPath({ method: 'get', path: '/v1/webhooks', summary: 'List webhook endpoints', responses: { 200: { description: 'Endpoints', ...json(z.object({ items: z.array(WebhookSchema) })) }, ...errorResponses(401, 403, 429) } });
registry.registerPath({ method: 'get', path: '/v1/webhooks/{id}', summary: 'Read a webhook endpoint', request: { params: IdParam }, responses: { 200: { description: 'Endpoint', ...json(WebhookSchema) }, ...errorResponses(401, 403, 404, 429) } });
registry.registerPath({ method: 'patch', path: '/v1/webhooks/{id}', summary: 'Update url, events or is_active', request: { params: IdParam, body: json(UpdateWebhookSchema) }, responses: { 200: { description: 'Endpoint', ...json(WebhookSchema) }, ...errorResponses(400, 401, 403, 404, 422, 429) } });
registry.registerPath({ method: 'delete', path: '/v1/webhooks/{id}', summary: 'Delete a webhook endpoint', request: { params: IdParam }, responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403, 404, 429) } });
registry.registerPath({ method: 'get', path: '/v1/webhooks/{id}/deliveries', summary: 'Delivery attempts, newest first, cursor-paged', request: { params: IdParam, query: PageQuery }, responses: { 200: { description: 'Attempts', ...json(z.object({ items: z.array(DeliverySchema), next_cursor: z.string().nullable(), has_more: z.boolean() })) }, ...errorResponses(401, 403, 404, 422, 429) } });
registry.registerPath({ method: 'post', path: '/v1/webhooks/{id}/test', summary: 'Send a signed synthetic job.completed and log it', request: { params: IdParam }, responses: { 200: { description: 'The delivery record', ...json(DeliverySchema) }, ...errorResponses(401, 403, 404, 429) } });

function present(e: WebhookEndpoint, withSecret = false) {
  return { id: e.id, url: e.url, ...(withSecret ? { secret: e.secret } : {}), events: e.events, is_active: e.isActive, created_at: e.createdAt.toISOString() };
}

/** http(s) only; a literal private address is refused here, a hostname is checked at connect time. */
function validTarget(url: string, allowPrivate: boolean): string {
  const syntax = checkUrlSyntax(url);
  if (!syntax.ok) throw ApiError.unprocessable(`url ${syntax.reason}`, [{ field: 'url', message: syntax.reason }]);
  const host = syntax.url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && net.isIP(host) && isPrivateAddress(host)) {
    throw ApiError.unprocessable(`url points to ${host}, a private or reserved address, which is not allowed`, [{ field: 'url', message: 'private address' }]);
  }
  return syntax.url.toString();
}

export function webhooksRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  async function load(ctx: ApiContext): Promise<WebhookEndpoint> {
    const raw = ctx.params.id ?? '';
    const id = /^\d{1,12}$/.test(raw) ? Number(raw) : NaN;
    const endpoint = Number.isFinite(id) ? await ctx.state.em.findOne(WebhookEndpoint, { id, accountId: accountOf(ctx).id }) : null;
    if (!endpoint) throw ApiError.notFound(`No webhook endpoint with id ${raw} in this account`);
    return endpoint;
  }

  router.post('/v1/webhooks', async (ctx) => {
    const account = accountOf(ctx);
    const body = parseInput(CreateWebhookSchema, jsonBody(ctx));
    const url = validTarget(body.url, deps.config.allowPrivateNetwork);
    const count = await ctx.state.em.count(WebhookEndpoint, { accountId: account.id });
    if (count >= MAX_ENDPOINTS_PER_ACCOUNT) {
      throw ApiError.unprocessable(`An account may have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one first`);
    }
    const endpoint = ctx.state.em.create(WebhookEndpoint, { accountId: account.id, url, secret: newWebhookSecret(), events: body.events, isActive: true, createdAt: new Date() });
    await ctx.state.em.flush();
    ctx.status = 201;
    ctx.set('Location', `/v1/webhooks/${endpoint.id}`);
    ctx.body = present(endpoint, true);
  });

  router.get('/v1/webhooks', async (ctx) => {
    const items = await ctx.state.em.find(WebhookEndpoint, { accountId: accountOf(ctx).id }, { orderBy: { id: 'asc' } });
    ctx.body = { items: items.map((e) => present(e)) };
  });

  router.get('/v1/webhooks/:id', async (ctx) => {
    ctx.body = present(await load(ctx));
  });

  router.patch('/v1/webhooks/:id', async (ctx) => {
    const endpoint = await load(ctx);
    const body = parseInput(UpdateWebhookSchema, jsonBody(ctx));
    if (body.url !== undefined) endpoint.url = validTarget(body.url, deps.config.allowPrivateNetwork);
    if (body.events !== undefined) endpoint.events = body.events;
    if (body.is_active !== undefined) endpoint.isActive = body.is_active;
    await ctx.state.em.flush();
    ctx.body = present(endpoint);
  });

  router.delete('/v1/webhooks/:id', async (ctx) => {
    const endpoint = await load(ctx);
    ctx.state.em.remove(endpoint);
    await ctx.state.em.flush();
    ctx.status = 204;
  });

  router.get('/v1/webhooks/:id/deliveries', async (ctx) => {
    const endpoint = await load(ctx);
    const q = parseInput(PageQuery, ctx.query);
    const where: Record<string, unknown> = { webhookId: endpoint.id, accountId: endpoint.accountId };
    if (q.cursor) Object.assign(where, afterCursor(q.cursor));
    const rows = await ctx.state.em.find(WebhookDelivery, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: q.limit + 1 });
    const p = page(rows, q.limit);
    ctx.body = { ...p, items: p.items.map(presentDelivery) };
  });

  router.post('/v1/webhooks/:id/test', async (ctx) => {
    const endpoint = await load(ctx);
    const jobId = crypto.randomUUID();
    const now = new Date();
    const body = JSON.stringify({
      event: 'job.completed',
      timestamp: now.toISOString(),
      data: {
        job_id: jobId,
        job_type: 'download',
        status: 'completed',
        source_url: 'https://example.com/watch/test-event',
        download_url: null,
        result_data: { title: 'Test event from mediasvc', duration: 0, format: 'mp4', filesize: 0 },
        credits_charged: 0,
        created_at: now.toISOString(),
        completed_at: now.toISOString(),
      },
    });
    const record = await performAttempt(
      ctx.state.em,
      { deliveryId: `whd_test_${jobId}`, accountId: endpoint.accountId, webhookId: endpoint.id, url: endpoint.url, event: 'job.completed', jobId, body, attempt: 1, nextAttemptAt: null },
      { allowPrivateNetwork: deps.config.allowPrivateNetwork, timeoutMs: deps.config.webhookTimeoutMs, now: async () => Date.now() },
    );
    ctx.body = presentDelivery(record);
  });

  return router;
}
