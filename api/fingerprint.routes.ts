import Router from '@koa/router';
import { z } from 'zod';
import type { FingerprintParams } from '../lib/job.types';
import type { ApiDeps, ApiState } from './context';
import { createJob } from './jobs.service';
import { errorResponses, registry } from './openapi';
import { IdempotencyHeaderSchema, JobCreatedSchema, TimeString } from './schemas';
import { jsonBody, parseInput } from './validation';

export const FingerprintRequestSchema = z
  .object({
    url: z.string({ error: 'is required' }).min(1, 'is required'),
    timestamp: TimeString.nullable().default(null).openapi({ description: 'Frame to hash; default 25% of the duration' }),
    hash_size: z
      .union([z.literal(8), z.literal(16), z.literal(32)], { error: 'must be 8, 16 or 32' })
      .default(16)
      .openapi({ description: 'Bits per side: each hash has hash_size² bits' }),
    webhook_url: z.string().nullable().default(null),
  })
  .openapi('FingerprintRequest');

registry.registerPath({
  method: 'post',
  path: '/v1/fingerprint',
  summary: 'Perceptual hashes (average, perceptual, difference) of one frame (async job; 1 credit)',
  request: { headers: IdempotencyHeaderSchema, body: { content: { 'application/json': { schema: FingerprintRequestSchema } } } },
  responses: {
    202: { description: 'Job accepted', content: { 'application/json': { schema: JobCreatedSchema } } },
    ...errorResponses(400, 401, 402, 403, 409, 422, 429, 503),
  },
});

export function fingerprintRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.post('/v1/fingerprint', async (ctx) => {
    const params: FingerprintParams = parseInput(FingerprintRequestSchema, jsonBody(ctx));
    await createJob(ctx, deps, { jobType: 'fingerprint', cost: 1, params });
  });
  return router;
}
