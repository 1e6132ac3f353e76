import Router from '@koa/router';
import { z } from 'zod';
import type { CommentsParams } from '../lib/job.types';
import type { ApiDeps, ApiState } from './context';
import { createJob } from './jobs.service';
import { errorResponses, registry } from './openapi';
import { IdempotencyHeaderSchema, JobCreatedSchema } from './schemas';
import { jsonBody, parseInput } from './validation';

export const CommentsRequestSchema = z
  .object({
    url: z.string({ error: 'is required' }).min(1, 'is required'),
    max_comments: z
      .number({ error: 'must be an integer from 1 to 1000' })
      .int('must be an integer from 1 to 1000')
      .min(1, 'must be at least 1')
      .max(1000, 'must be at most 1000')
      .default(100)
      .openapi({ description: 'Maximum top-level comments (replies are not counted)' }),
    sort: z.enum(['top', 'newest'], { error: 'must be "top" or "newest"' }).default('top').openapi({ description: '`top`: most liked first (PeerTube: most replies first); `newest`: newest first' }),
    include_replies: z.boolean({ error: 'must be true or false' }).default(true).openapi({ description: 'false leaves every replies array empty' }),
    webhook_url: z.string().nullable().default(null),
  })
  .openapi('CommentsRequest');

registry.registerPath({
  method: 'post',
  path: '/v1/comments',
  summary: 'Comments and reply threads of a video as a JSON file (async job; 1 credit)',
  request: { headers: IdempotencyHeaderSchema, body: { content: { 'application/json': { schema: CommentsRequestSchema } } } },
  responses: {
    202: { description: 'Job accepted', content: { 'application/json': { schema: JobCreatedSchema } } },
    ...errorResponses(400, 401, 402, 403, 409, 422, 429, 503),
  },
});

export function commentsRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.post('/v1/comments', async (ctx) => {
    const params: CommentsParams = parseInput(CommentsRequestSchema, jsonBody(ctx));
    await createJob(ctx, deps, { jobType: 'comments', cost: 1, params });
  });
  return router;
}
