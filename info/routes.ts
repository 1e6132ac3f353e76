import Router from '@koa/router';
import { z } from 'zod';
import { SourceUrl } from '../operations/fields';
import { VideoInfoSchema } from '../lib/video-info';
import type { ApiDeps, ApiState } from '../api/context';
import { accountOf } from '../api/context';
import { ErrorSchema, errorResponses, json, registry } from '../api/openapi';
import { readVideoInfo } from './service';
import { parseInput } from '../lib/validation';

const InfoQuerySchema = z.strictObject({ url: SourceUrl });

registry.registerPath({
  method: 'get',
  path: '/v1/info',
  operationId: 'getVideoInfo',
  summary: 'Read video metadata and formats (synchronous; 1 credit, charged only on 200)',
  request: { query: InfoQuerySchema },
  responses: {
    200: { description: 'Video info', ...json(VideoInfoSchema) },
    ...errorResponses(401, 402, 403, 404, 422, 429, 503),
    502: { description: 'The source could not be read', ...json(ErrorSchema) },
    504: { description: 'The source took too long to answer', ...json(ErrorSchema) },
  },
});

export function infoRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.get('/v1/info', async (ctx) => {
    const { url } = parseInput(InfoQuerySchema, ctx.query);
    ctx.body = await readVideoInfo(ctx.state.em, deps, accountOf(ctx), url);
  });
  return router;
}
