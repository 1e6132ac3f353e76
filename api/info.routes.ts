import Router from '@koa/router';
import { z } from 'zod';
import { chargeCredits, currentBalance } from '../db/credits';
import { ApiError } from '../lib/errors';
import { InfoError } from '../lib/orchestrator';
import type { ApiDeps, ApiState } from './context';
import { accountOf } from './context';
import { assertSafeUrl } from './jobs.service';
import { errorResponses, registry } from './openapi';
import { VideoInfoSchema } from './schemas';
import { parseInput } from './validation';

const InfoQuerySchema = z.object({ url: z.string({ error: 'is required' }).min(1, 'is required') });

registry.registerPath({
  method: 'get',
  path: '/v1/info',
  summary: 'Read video metadata and formats (synchronous; 1 credit, charged only on 200)',
  request: { query: InfoQuerySchema },
  responses: {
    200: { description: 'Video info', content: { 'application/json': { schema: VideoInfoSchema } } },
    ...errorResponses(401, 402, 403, 404, 422, 429, 503),
    502: { description: 'The source could not be read' },
    504: { description: 'The source took too long to answer' },
  },
});

const COST = 1;

export function infoRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  router.get('/v1/info', async (ctx) => {
    const account = accountOf(ctx);
    const { url } = parseInput(InfoQuerySchema, ctx.query);
    await assertSafeUrl('url', url, deps.config.allowPrivateNetwork);
    const balance = await currentBalance(ctx.state.em, account.id);
    if (balance < COST) throw ApiError.paymentRequired(`An info call costs ${COST} credit but the balance is ${balance}; add credits or upgrade the plan.`);

    let info;
    try {
      info = await deps.orchestrator.fetchInfo(url);
    } catch (err) {
      if (!(err instanceof InfoError)) throw new ApiError(503, `The job engine is unavailable; try again shortly. (${(err as Error).message})`);
      if (err.kind === 'unsupported' || err.kind === 'unavailable') throw ApiError.notFound(err.message);
      if (err.kind === 'rejected') throw ApiError.unprocessable(err.message, [{ field: 'url', message: err.message }]);
      if (err.kind === 'timeout') throw new ApiError(504, `${err.message}; try again later`);
      throw new ApiError(502, `The source could not be read: ${err.message}`);
    }
    // Charged only once the answer is ready (decisions.md).
    await chargeCredits(ctx.state.em, account.id, COST, 'an info call', async () => ({ jobId: null, value: null }));
    ctx.body = info;
  });

  return router;
}
