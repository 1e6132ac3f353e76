// `POST /v1/{operation}` for every operation in the registry, with its OpenAPI entry.
import Router from '@koa/router';
import { OPERATIONS } from '../operations/registry';
import type { ApiDeps, ApiState } from '../api/context';
import { accountOf } from '../api/context';
import { errorResponses, json, registry } from '../api/openapi';
import { IdempotencyHeaderSchema, JobCreatedSchema } from '../api/schemas';
import { createJob } from './service';
import { jsonBody } from '../api/validation';

for (const op of Object.values(OPERATIONS)) {
  registry.registerPath({
    method: 'post',
    path: op.path,
    operationId: `create${op.title}Job`,
    summary: `${op.summary} (async job; ${op.costText})`,
    request: { headers: IdempotencyHeaderSchema, body: { required: true, ...json(op.request) } },
    responses: {
      202: { description: 'Job accepted', ...json(JobCreatedSchema) },
      ...errorResponses(400, 401, 402, 403, 404, 409, 410, 415, 422, 429, 503),
    },
  });
}

export function operationsRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  for (const op of Object.values(OPERATIONS)) {
    router.post(op.path, async (ctx) => {
      const created = await createJob(ctx.state.em, deps, accountOf(ctx), op.jobType, jsonBody(ctx));
      ctx.status = 202;
      ctx.set('Location', `/v1/jobs/${created.job_id}`);
      ctx.body = created;
    });
  }
  return router;
}
