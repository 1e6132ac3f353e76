import Router from '@koa/router';
import { createKey, deleteAccountKey, keysWithUsage, loadKey, renameAccountKey, setAccountKeyActive } from './service';
import { formString, invalidDetail, redirectWithFlash, renderPage } from '../api/dashboard/render';
import { signedInAccount, type DashboardContext, type DashboardState } from '../api/dashboard/session';
import { deleteKeyView, keysView, type KeysViewData } from './dashboard.view';

async function showKeys(ctx: DashboardContext, extra: Partial<KeysViewData> = {}, status = 200): Promise<void> {
  const data = await keysWithUsage(ctx.state.em, signedInAccount(ctx));
  await renderPage(ctx, 'API keys', (page) => keysView(page, { ...data, ...extra }), { status, wide: true });
}

export function keysPages(): Router<DashboardState> {
  const router = new Router<DashboardState>();
  const load = (ctx: DashboardContext) => loadKey(ctx.state.em, signedInAccount(ctx), ctx.params.id ?? '');

  router.get('/dashboard/keys', (ctx) => showKeys(ctx));

  // The new key is rendered in this response (not after a redirect): it is never stored, so it can be shown only once.
  router.post('/dashboard/keys', async (ctx) => {
    const name = formString(ctx, 'name');
    try {
      const created = await createKey(ctx.state.em, signedInAccount(ctx), name);
      await showKeys(ctx, { created });
    } catch (err) {
      await showKeys(ctx, { error: invalidDetail(err), nameValue: name }, 422);
    }
  });

  router.post('/dashboard/keys/:id/rename', async (ctx) => {
    const key = await load(ctx);
    try {
      await renameAccountKey(ctx.state.em, key, formString(ctx, 'name'));
      await redirectWithFlash(ctx, '/dashboard/keys', `Key renamed to "${key.name}".`);
    } catch (err) {
      await showKeys(ctx, { error: invalidDetail(err) }, 422);
    }
  });

  for (const [action, active] of [['deactivate', false], ['activate', true]] as const) {
    router.post(`/dashboard/keys/:id/${action}`, async (ctx) => {
      const key = await setAccountKeyActive(ctx.state.em, await load(ctx), active);
      await redirectWithFlash(ctx, '/dashboard/keys', `Key "${key.name}" is ${active ? 'active again' : 'deactivated: requests with it get 403'}.`);
    });
  }

  router.get('/dashboard/keys/:id/delete', async (ctx) => {
    const key = await load(ctx);
    await renderPage(ctx, 'Delete API key', (page) => deleteKeyView(page, key));
  });

  router.post('/dashboard/keys/:id/delete', async (ctx) => {
    const key = await load(ctx);
    await deleteAccountKey(ctx.state.em, key);
    await redirectWithFlash(ctx, '/dashboard/keys', `Key "${key.name}" deleted.`);
  });

  return router;
}
