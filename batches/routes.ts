// /v1/batches: create, read (with a page of items), list, cancel; with their OpenAPI entries.
import Router from '@koa/router';
import { z } from 'zod';
import type { ApiDeps, ApiState } from '../api/context';
import { accountOf } from '../api/context';
import { errorResponses, json, registry } from '../api/openapi';
import { IdempotencyHeaderSchema, PageQuerySchema } from '../api/schemas';
import { jsonBody } from '../api/validation';
import { parseInput } from '../lib/validation';
import { BatchCreatedSchema, BatchListSchema, BatchSchema, CreateBatchSchema } from './schemas';
import { cancelBatch, createBatch, getBatch, listBatches } from './service';

const BatchIdParam = z.object({ batch_id: z.uuid() });

registry.registerPath({
  method: 'post',
  path: '/v1/batches',
  operationId: 'createBatch',
  summary: 'Run an operation on every item of a playlist, channel, feed, page or URL list: each item is an ordinary job with its own charge (async; `list` costs 1 credit and runs nothing)',
  request: { headers: IdempotencyHeaderSchema, body: { required: true, ...json(CreateBatchSchema) } },
  responses: { 202: { description: 'Batch accepted; its source is being expanded', ...json(BatchCreatedSchema) }, ...errorResponses(400, 401, 402, 403, 409, 413, 415, 422, 429, 503) },
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
