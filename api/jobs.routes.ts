import Router from '@koa/router';
import { z } from 'zod';
import { Job } from '../db/job.entity';
import { ApiError } from '../lib/errors';
import type { ApiDeps, ApiState } from './context';
import { accountOf } from './context';
import { afterCursor, page } from './cursor';
import { presentJob } from './jobs.service';
import { errorResponses, registry } from './openapi';
import { JobListSchema, JobSchema, ListJobsQuerySchema } from './schemas';
import { parseInput } from './validation';

registry.registerPath({
  method: 'get',
  path: '/v1/jobs/{job_id}',
  summary: 'Read one job',
  request: { params: z.object({ job_id: z.string().uuid() }) },
  responses: { 200: { description: 'The job', content: { 'application/json': { schema: JobSchema } } }, ...errorResponses(401, 403, 404, 429) },
});
registry.registerPath({
  method: 'get',
  path: '/v1/jobs',
  summary: 'List jobs, newest first, with cursor pagination',
  request: { query: ListJobsQuerySchema },
  responses: { 200: { description: 'A page of jobs', content: { 'application/json': { schema: JobListSchema } } }, ...errorResponses(401, 403, 422, 429) },
});


export function jobsRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  // Live progress comes from the running activity's heartbeat in Temporal.
  async function withProgress(job: Job) {
    if (job.status !== 'processing') return presentJob(job, deps.links, job.status === 'completed' ? 100 : job.status === 'failed' ? null : 0);
    const live = await deps.orchestrator.jobProgress(job.id);
    return presentJob(job, deps.links, live ?? job.progress);
  }

  router.get('/v1/jobs/:job_id', async (ctx) => {
    const account = accountOf(ctx);
    const id = ctx.params.job_id ?? '';
    const job = /^[0-9a-f-]{36}$/i.test(id) ? await ctx.state.em.findOne(Job, { id: id.toLowerCase(), accountId: account.id }) : null;
    if (!job) throw ApiError.notFound(`No job with id ${id} in this account`);
    ctx.body = await withProgress(job);
  });

  router.get('/v1/jobs', async (ctx) => {
    const account = accountOf(ctx);
    const q = parseInput(ListJobsQuerySchema, ctx.query);
    const where: Record<string, unknown> = { accountId: account.id };
    if (q.status) where.status = q.status;
    if (q.job_type) where.jobType = q.job_type;
    if (q.cursor) Object.assign(where, afterCursor(q.cursor));
    const rows = await ctx.state.em.find(Job, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: q.limit + 1 });
    const p = page(rows, q.limit);
    ctx.body = { ...p, items: await Promise.all(p.items.map(withProgress)) };
  });

  return router;
}
