import Router from '@koa/router';
import type { ApiDeps } from '../api/context';
import { redirectWithFlash, renderPage } from '../api/dashboard/render';
import { signedInAccount, type DashboardContext, type DashboardState } from '../api/dashboard/session';
import { batchesListView, batchView } from './dashboard.view';
import { cancelBatch, getBatch, listBatches } from './service';

const PAGE_SIZE = 20;
const cursorOf = (ctx: DashboardContext) => (typeof ctx.query.cursor === 'string' && ctx.query.cursor ? ctx.query.cursor : undefined);

/** The account's batches and each one's progress, through the same service as REST. */
export function batchesPages(deps: ApiDeps): Router<DashboardState> {
  const router = new Router<DashboardState>();
  router.get('/dashboard/batches', async (ctx) => {
    const cursor = cursorOf(ctx);
    const page = await listBatches(ctx.state.em, signedInAccount(ctx), { cursor, limit: PAGE_SIZE });
    await renderPage(ctx, 'Batches', (p) => batchesListView(p, { batches: page.items, nextCursor: page.next_cursor, cursor }), { wide: true });
  });
  router.get('/dashboard/batches/:id', async (ctx) => {
    const cursor = cursorOf(ctx);
    const batch = await getBatch(ctx.state.em, signedInAccount(ctx), ctx.params.id ?? '', { cursor, limit: 50 });
    await renderPage(ctx, 'Batch', (p) => batchView(p, batch, cursor), { wide: true });
  });
  router.post('/dashboard/batches/:id/cancel', async (ctx) => {
    const { ended, batch } = await cancelBatch(ctx.state.em, deps, signedInAccount(ctx), ctx.params.id ?? '');
    await redirectWithFlash(ctx, `/dashboard/batches/${batch.batch_id}`, ended ? 'Batch cancelled; its unfinished jobs were refunded.' : 'Cancellation requested; the batch ends shortly.');
  });
  return router;
}
