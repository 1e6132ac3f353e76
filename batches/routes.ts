// /v1/batches: create, read (with a page of items), list, cancel; with their OpenAPI entries.
import Router from '@koa/router';
import { z } from 'zod';
import type { ApiDeps, ApiState } from '../api/context';
import { accountOf } from '../api/context';
import { errorResponses, json, registry } from '../api/openapi';
import { IdempotencyHeaderSchema, PageQuerySchema, Timestamp } from '../api/schemas';
import { jsonBody } from '../api/validation';
import { parseInput } from '../lib/validation';
import { CreateBatchSchema } from './schemas';
import { cancelBatch, createBatch, getBatch, listBatches } from './service';
import { BATCH_ITEM_STATUSES, BATCH_STATUSES } from './types';

const BatchIdParam = z.object({ batch_id: z.uuid() });

const CountsSchema = z.object({ total: z.number().int(), pending: z.number().int(), processing: z.number().int(), completed: z.number().int(), failed: z.number().int(), skipped: z.number().int() }).meta({ id: 'BatchCounts' });

const BatchFields = {
  batch_id: z.uuid(),
  status: z.enum(BATCH_STATUSES),
  operation: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  source: z.union([z.object({ url: z.string() }), z.object({ urls: z.array(z.string()) })]),
  max_items: z.number().int(),
  after: Timestamp.nullable(),
  before: Timestamp.nullable(),
  order: z.enum(['newest', 'oldest']),
  counts: CountsSchema,
  error: z.string().nullable().meta({ description: 'Why the source could not be expanded (status failed)' }),
  note: z.string().nullable().meta({ description: 'What a limit left out of the source, and which limit' }),
  credits_charged: z.number().int().meta({ description: "The batch's own charge (`list`); each item job carries its own" }),
  webhook_url: z.string().nullable(),
  subscription_id: z.uuid().nullable().meta({ description: 'The subscription whose check found these items; null for a batch created by a client' }),
  created_at: Timestamp,
  completed_at: Timestamp.nullable(),
};

const BatchSummarySchema = z.object(BatchFields).meta({ id: 'BatchSummary' });

const BatchItemSchema = z
  .object({
    url: z.string(),
    title: z.string().nullable(),
    published_at: Timestamp.nullable(),
    duration: z.number().nullable(),
    thumbnail: z.string().nullable(),
    status: z.enum(BATCH_ITEM_STATUSES),
    job_id: z.uuid().nullable(),
    reason: z.string().nullable().meta({ description: 'Why it was skipped or failed' }),
  })
  .meta({ id: 'BatchItem' });

const BatchSchema = z.object({ ...BatchFields, items: z.array(BatchItemSchema), next_cursor: z.string().nullable(), has_more: z.boolean() }).meta({ id: 'Batch' });
const BatchListSchema = z.object({ items: z.array(BatchSummarySchema), next_cursor: z.string().nullable(), has_more: z.boolean() }).meta({ id: 'BatchList' });
const BatchCreatedSchema = z.object({ batch_id: z.uuid(), status: z.literal('expanding'), operation: z.string(), credits_charged: z.number().int(), created_at: Timestamp }).meta({ id: 'BatchCreated' });

registry.registerPath({
  method: 'post',
  path: '/v1/batches',
  operationId: 'createBatch',
  summary: 'Run an operation on every item of a playlist, channel, feed, page or URL list: each item is an ordinary job with its own charge (async; `list` costs 1 credit and runs nothing)',
  request: { headers: IdempotencyHeaderSchema, body: { required: true, ...json(CreateBatchSchema) } },
  responses: { 202: { description: 'Batch accepted; its source is being expanded', ...json(BatchCreatedSchema) }, ...errorResponses(400, 401, 402, 403, 415, 422, 429, 503) },
});
registry.registerPath({
  method: 'get',
  path: '/v1/batches/{batch_id}',
  operationId: 'getBatch',
  summary: 'Read a batch: its status, counts by item status and a page of its items (free)',
  request: { params: BatchIdParam, query: PageQuerySchema },
  responses: { 200: { description: 'The batch', ...json(BatchSchema) }, ...errorResponses(401, 403, 404, 422, 429) },
});
registry.registerPath({
  method: 'get',
  path: '/v1/batches',
  operationId: 'listBatches',
  summary: 'List batches, newest first, with cursor pagination (free)',
  request: { query: PageQuerySchema },
  responses: { 200: { description: 'A page of batches', ...json(BatchListSchema) }, ...errorResponses(401, 403, 422, 429) },
});
registry.registerPath({
  method: 'post',
  path: '/v1/batches/{batch_id}/cancel',
  operationId: 'cancelBatch',
  summary: "Cancel a batch's unfinished items (each refunded once); finished items stay as they are (free)",
  request: { params: BatchIdParam },
  responses: {
    200: { description: 'The batch, ended (cancelled)', ...json(BatchSchema) },
    202: { description: 'Cancellation requested; the batch ends shortly', ...json(BatchSchema) },
    ...errorResponses(401, 403, 404, 409, 429, 503),
  },
});

export function batchesRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.post('/v1/batches', async (ctx) => {
    const created = await createBatch(ctx.state.em, deps, accountOf(ctx), jsonBody(ctx));
    ctx.status = 202;
    ctx.set('Location', `/v1/batches/${created.batch_id}`);
    ctx.body = created;
  });
  router.get('/v1/batches/:batch_id', async (ctx) => {
    const q = parseInput(PageQuerySchema, ctx.query);
    ctx.body = await getBatch(ctx.state.em, accountOf(ctx), ctx.params.batch_id ?? '', q);
  });
  router.get('/v1/batches', async (ctx) => {
    const q = parseInput(PageQuerySchema, ctx.query);
    ctx.body = await listBatches(ctx.state.em, accountOf(ctx), q);
  });
  router.post('/v1/batches/:batch_id/cancel', async (ctx) => {
    const { ended, batch } = await cancelBatch(ctx.state.em, deps, accountOf(ctx), ctx.params.batch_id ?? '');
    ctx.status = ended ? 200 : 202;
    ctx.body = batch;
  });
  return router;
}
