import Router from '@koa/router';
import { DomainError } from '../lib/errors';
import { JOB_STATUSES, type JobStatus } from './types';
import { JOB_TYPES, type JobType } from '../operations/registry';
import type { ApiDeps } from '../api/context';
import { cancelJob, createJob, getJob, listJobs } from './service';
import { jobWithOutput } from './dashboard-output';
import { errorsByControl, formFor, requestFromForm, type PostedForm } from '../api/dashboard/operation-forms';
import { formBody, redirectWithFlash, renderPage } from '../api/dashboard/render';
import { signedInAccount, type DashboardContext, type DashboardState } from '../api/dashboard/session';
import { jobsListView, jobView } from './dashboard.view';
import { operationFormView, operationListView } from '../api/dashboard/views/operation-form.view';

const PAGE_SIZE = 20;

const queryValue = (ctx: DashboardContext, name: string) => (typeof ctx.query[name] === 'string' && ctx.query[name] ? (ctx.query[name] as string) : undefined);

function jobTypeParam(ctx: DashboardContext): JobType {
  const type = ctx.params.type ?? '';
  if (!(JOB_TYPES as readonly string[]).includes(type)) throw DomainError.notFound(`There is no operation called ${type}`);
  return type as JobType;
}

/** Errors a person can fix on the form (invalid fields, credits, the engine being down) are shown with it. */
const FORM_ERRORS: Partial<Record<DomainError['kind'], number>> = { invalid: 422, insufficient_credits: 402, unavailable: 503 };

async function showForm(ctx: DashboardContext, jobType: JobType, opts: { posted: PostedForm | null; error?: DomainError }, status = 200): Promise<void> {
  const form = formFor(jobType);
  const variant = form.variants && opts.posted ? String(opts.posted[form.variants.field] ?? '') : null;
  const errors = errorsByControl(form, variant, opts.error?.extra.errors ?? []);
  await renderPage(ctx, `New ${form.title.toLowerCase()} job`, (page) => operationFormView(page, form, { posted: opts.posted, errors, error: opts.error?.detail ?? null }), { status });
}

/** The account's jobs, one page per job, and a form per operation that starts a job like REST does. */
export function jobsPages(deps: ApiDeps): Router<DashboardState> {
  const router = new Router<DashboardState>();

  router.get('/dashboard/jobs', async (ctx) => {
    const status = JOB_STATUSES.find((s) => s === queryValue(ctx, 'status')) as JobStatus | undefined;
    const jobType = JOB_TYPES.find((t) => t === queryValue(ctx, 'job_type')) as JobType | undefined;
    const cursor = queryValue(ctx, 'cursor');
    const page = await listJobs(ctx.state.em, deps, signedInAccount(ctx), { status, jobType, cursor, limit: PAGE_SIZE });
    await renderPage(ctx, 'Jobs', (p) => jobsListView(p, { jobs: page.items, nextCursor: page.next_cursor, filter: { status, job_type: jobType }, cursor }), { wide: true });
  });

  router.get('/dashboard/jobs/new', async (ctx) => {
    await renderPage(ctx, 'New job', () => operationListView(JOB_TYPES.map(formFor)));
  });

  router.get('/dashboard/jobs/new/:type', (ctx) => showForm(ctx, jobTypeParam(ctx), { posted: null }));

  // The same path as REST: validation, credits and the workflow start all happen in createJob.
  router.post('/dashboard/jobs/new/:type', async (ctx) => {
    const jobType = jobTypeParam(ctx);
    const posted = formBody(ctx);
    try {
      const created = await createJob(ctx.state.em, deps, signedInAccount(ctx), jobType, requestFromForm(formFor(jobType), posted).body);
      await redirectWithFlash(ctx, `/dashboard/jobs/${created.job_id}`, `Job started; ${created.credits_charged} credit${created.credits_charged === 1 ? '' : 's'} charged.`);
    } catch (err) {
      const status = err instanceof DomainError ? FORM_ERRORS[err.kind] : undefined;
      if (!status) throw err;
      await showForm(ctx, jobType, { posted, error: err as DomainError }, status);
    }
  });

  router.get('/dashboard/jobs/:id', async (ctx) => {
    const data = await jobWithOutput(ctx.state.em, deps, signedInAccount(ctx), ctx.params.id ?? '');
    await renderPage(ctx, `${data.job.job_type.charAt(0).toUpperCase()}${data.job.job_type.slice(1)} job`, (page) => jobView(page, data), { wide: true });
  });

  // Polled by the job page while the job runs.
  router.get('/dashboard/jobs/:id/status.json', async (ctx) => {
    const job = await getJob(ctx.state.em, deps, signedInAccount(ctx).id, ctx.params.id ?? '');
    ctx.body = { status: job.status, progress: job.progress, error_message: job.error_message };
  });

  router.post('/dashboard/jobs/:id/cancel', async (ctx) => {
    const { ended, job } = await cancelJob(ctx.state.em, deps, signedInAccount(ctx), ctx.params.id ?? '');
    await redirectWithFlash(ctx, `/dashboard/jobs/${job.job_id}`, ended ? 'Job cancelled and refunded.' : 'Cancellation requested; the job ends shortly.');
  });

  return router;
}
