import { JOB_TYPES } from '../../operations/registry';
import Router from '@koa/router';
import { listAccountKeys } from '../../accounts/repository';
import { accountSummary } from '../../accounts/service';
import { listJobs } from '../../jobs/service';
import type { ApiDeps } from '../context';
import { ledgerPage, usagePerDay } from '../../credits/service';
import { renderPage } from './render';
import { signedInAccount, type DashboardState } from './session';
import { creditsView, overviewView } from '../../credits/dashboard.view';

const RECENT_JOBS = 5;

/** The overview and the credits-and-plan page. */
export function overviewPages(deps: Pick<ApiDeps, 'orchestrator' | 'links'>): Router<DashboardState> {
  const router = new Router<DashboardState>();

  router.get(['/dashboard', '/dashboard/'], async (ctx) => {
    const account = signedInAccount(ctx);
    const [summary, recent, keys] = [await accountSummary(ctx.state.em, account, JOB_TYPES), await listJobs(ctx.state.em, deps, account, { limit: RECENT_JOBS }), await listAccountKeys(ctx.state.em, account.id)];
    await renderPage(ctx, 'Overview', (page) => overviewView(page, { summary, recent: recent.items, keyCount: keys.length }), { wide: true });
  });

  router.get('/dashboard/credits', async (ctx) => {
    const account = signedInAccount(ctx);
    const cursor = typeof ctx.query.cursor === 'string' && ctx.query.cursor ? ctx.query.cursor : undefined;
    const summary = await accountSummary(ctx.state.em, account, JOB_TYPES);
    const usage = await usagePerDay(ctx.state.em, account, JOB_TYPES);
    const ledger = await ledgerPage(ctx.state.em, account, cursor);
    await renderPage(ctx, 'Credits and plan', (page) => creditsView(page, { summary, usage, ledger, cursor }), { wide: true });
  });

  return router;
}
