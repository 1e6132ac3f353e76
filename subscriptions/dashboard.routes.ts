import Router from '@koa/router';
import type { ApiDeps } from '../api/context';
import { redirectWithFlash, renderPage } from '../api/dashboard/render';
import { signedInAccount, type DashboardContext, type DashboardState } from '../api/dashboard/session';
import { deleteSubscriptionView, subscriptionsView } from './dashboard.view';
import { checkSubscriptionNow, deleteSubscription, getSubscription, listSubscriptions, updateSubscription } from './service';

const LIST = '/dashboard/subscriptions';

/** The account's subscriptions, with pause, resume, check now and delete, through the same service as REST. */
export function subscriptionsPages(deps: ApiDeps): Router<DashboardState> {
  const router = new Router<DashboardState>();
  const id = (ctx: DashboardContext) => ctx.params.id ?? '';
  router.get(LIST, async (ctx) => {
    const cursor = typeof ctx.query.cursor === 'string' && ctx.query.cursor ? ctx.query.cursor : undefined;
    const page = await listSubscriptions(ctx.state.em, signedInAccount(ctx), { cursor, limit: 20 });
    await renderPage(ctx, 'Subscriptions', (p) => subscriptionsView(p, { subscriptions: page.items, nextCursor: page.next_cursor, cursor }), { wide: true });
  });
  router.post(`${LIST}/:id/pause`, async (ctx) => {
    await updateSubscription(ctx.state.em, deps, signedInAccount(ctx), id(ctx), { paused: true });
    await redirectWithFlash(ctx, LIST, 'Subscription paused: no new jobs until it is resumed.');
  });
  router.post(`${LIST}/:id/resume`, async (ctx) => {
    await updateSubscription(ctx.state.em, deps, signedInAccount(ctx), id(ctx), { paused: false });
    await redirectWithFlash(ctx, LIST, 'Subscription resumed.');
  });
  router.post(`${LIST}/:id/check`, async (ctx) => {
    await checkSubscriptionNow(ctx.state.em, deps, signedInAccount(ctx), id(ctx));
    await redirectWithFlash(ctx, LIST, 'Check started; new items appear as a batch.');
  });
  router.get(`${LIST}/:id/delete`, async (ctx) => {
    const sub = await getSubscription(ctx.state.em, signedInAccount(ctx), id(ctx));
    await renderPage(ctx, 'Delete subscription', (p) => deleteSubscriptionView(p, sub));
  });
  router.post(`${LIST}/:id/delete`, async (ctx) => {
    await deleteSubscription(ctx.state.em, deps, signedInAccount(ctx), id(ctx));
    await redirectWithFlash(ctx, LIST, 'Subscription deleted.');
  });
  return router;
}
