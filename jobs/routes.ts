import Router from '@koa/router';
import { z } from 'zod';
import type { ApiDeps, ApiState } from '../api/context';
import { accountIdOf, accountOf } from '../api/context';
import { errorResponses, json, registry } from '../api/openapi';
import { JobListSchema, JobSchema, ListJobsQuerySchema } from '../api/schemas';
import { cancelJob, readJobBody, listJobs } from './service';
import { parseInput } from '../lib/validation';

const JobIdParam = z.object({ job_id: z.uuid() });

registry.registerPath({
  method: 'get',
  path: '/v1/jobs/{job_id}',
  operationId: 'getJob',
  summary: 'Read one job (free)',
  request: { params: JobIdParam },
  responses: { 200: { description: 'The job', ...json(JobSchema) }, ...errorResponses(401, 403, 404, 429) },
});
registry.registerPath({
  method: 'get',
  path: '/v1/jobs',
  operationId: 'listJobs',
  summary: 'List jobs, newest first, with cursor pagination (free)',
  request: { query: ListJobsQuerySchema },
  responses: { 200: { description: 'A page of jobs', ...json(JobListSchema) }, ...errorResponses(401, 403, 422, 429) },
});

registry.registerPath({
  method: 'post',
  path: '/v1/jobs/{job_id}/cancel',
  operationId: 'cancelJob',
  summary: 'Cancel a pending or processing job: it ends failed with "cancelled by the client" and is refunded (free; beyond the contract)',
  request: { params: JobIdParam },
  responses: {
    200: { description: 'The job, ended (failed, refunded)', ...json(JobSchema) },
    202: { description: 'Cancellation requested; the job ends shortly', ...json(JobSchema) },
    ...errorResponses(401, 403, 404, 409, 429, 503),
  },
});

export function jobsRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  router.get('/v1/jobs/:job_id', async (ctx) => {
    const stages = ctx.state.stages;
    stages?.mark('route');
    // serialised by readJobBody rather than by Koa: an ended job's text is kept for its next poll
    const body = await readJobBody(ctx.state.em, deps, accountIdOf(ctx), ctx.params.job_id ?? '', stages);
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = body;
  });

  router.get('/v1/jobs', async (ctx) => {
    const q = parseInput(ListJobsQuerySchema, ctx.query);
    ctx.body = await listJobs(ctx.state.em, deps, accountOf(ctx), { status: q.status, jobType: q.job_type, batchId: q.batch_id?.toLowerCase(), cursor: q.cursor, limit: q.limit });
  });

  router.post('/v1/jobs/:job_id/cancel', async (ctx) => {
    const { ended, job } = await cancelJob(ctx.state.em, deps, accountOf(ctx), ctx.params.job_id ?? '');
    ctx.status = ended ? 200 : 202;
    ctx.body = job;
  });

  return router;
}
