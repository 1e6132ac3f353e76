import Router from '@koa/router';
import { findOwner } from './owners.repository';
import type { Config } from '../lib/config';
import { DomainError } from '../lib/errors';
import { changePassword } from '../api/dashboard/auth.service';
import { formString, invalidDetail, redirectWithFlash, renderPage } from '../api/dashboard/render';
import { signedInAccount, type DashboardContext, type DashboardState } from '../api/dashboard/session';
import { accountView } from './dashboard.view';

async function showAccount(ctx: DashboardContext, error?: DomainError, status = 200): Promise<void> {
  const account = signedInAccount(ctx);
  const owner = await findOwner(ctx.state.em, account.id);
  const errors = new Map((error?.extra.errors ?? []).map((e) => [e.field, e.message]));
  await renderPage(ctx, 'Account', (page) => accountView(page, { account, owner, error: error?.detail ?? null, errors }), { status });
}

/** The owner's account page: who signs in, and their password. */
export function accountPages(config: Config): Router<DashboardState> {
  const router = new Router<DashboardState>();

  router.get('/dashboard/account', (ctx) => showAccount(ctx));

  router.post('/dashboard/account/password', async (ctx) => {
    try {
      await changePassword(ctx.state.em, config, signedInAccount(ctx).id, {
        current: formString(ctx, 'current_password'),
        next: formString(ctx, 'new_password'),
        confirm: formString(ctx, 'confirm_password'),
      });
      await redirectWithFlash(ctx, '/dashboard/account', 'Password saved.');
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'rate_limited') throw err;
      invalidDetail(err);
      await showAccount(ctx, err as DomainError, 422);
    }
  });

  return router;
}
