import Router from '@koa/router';
import { findOwner } from '../../accounts/owners.repository';
import type { Config } from '../../lib/config';
import { DomainError, type ErrorKind } from '../../lib/errors';
import { redeemLoginLink, signInWithPassword } from './auth.service';
import { formString, redirectWithFlash, renderPage, safeNext } from './render';
import { endSession, ensureSession, startSignedInSession, type DashboardContext, type DashboardState } from './session';
import { loginLinkFailedView, loginLinkView, signInView } from './views/auth.view';

const SIGN_IN_STATUS: Partial<Record<ErrorKind, number>> = { unauthenticated: 401, rate_limited: 429 };

/** A sign-in failure to show on the page (with Retry-After when throttled); anything else is rethrown. */
function signInFailure(ctx: DashboardContext, err: unknown): { message: string; status: number } {
  if (!(err instanceof DomainError) || !SIGN_IN_STATUS[err.kind]) throw err;
  if (err.extra.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(err.extra.retryAfterSeconds));
  return { message: err.detail, status: SIGN_IN_STATUS[err.kind]! };
}

function signInNotice(ctx: DashboardContext): string | null {
  if (ctx.query.expired === '1' || ctx.state.sessionExpired) return 'Your session has expired; sign in again.';
  if (ctx.query.signed_out === '1') return 'You are signed out.';
  return null;
}

/** Sign-in with email and password, one-time links, sign-out. Open to signed-out visitors. */
export function authPages(config: Config): Router<DashboardState> {
  const router = new Router<DashboardState>();

  router.get('/dashboard/sign-in', async (ctx) => {
    const next = safeNext(ctx.query.next);
    if (ctx.state.account) return ctx.redirect(next);
    await ensureSession(ctx, config);
    await renderPage(ctx, 'Sign in', (page) => signInView(page, { email: '', next, notice: signInNotice(ctx) }));
  });

  router.post('/dashboard/sign-in', async (ctx) => {
    const email = formString(ctx, 'email');
    const next = safeNext(formString(ctx, 'next'));
    try {
      const accountId = await signInWithPassword(ctx.state.em, config, { email, password: formString(ctx, 'password'), ip: ctx.ip });
      await startSignedInSession(ctx, config, accountId);
      ctx.status = 303;
      ctx.redirect(next);
    } catch (err) {
      const { message, status } = signInFailure(ctx, err);
      await renderPage(ctx, 'Sign in', (page) => signInView(page, { email, next, error: message }), { status });
    }
  });

  router.get('/dashboard/login/:token', async (ctx) => {
    await ensureSession(ctx, config);
    await renderPage(ctx, 'Sign in with a link', (page) => loginLinkView(page, ctx.params.token ?? ''));
  });

  router.post('/dashboard/login', async (ctx) => {
    try {
      const accountId = await redeemLoginLink(ctx.state.em, config, { token: formString(ctx, 'token'), ip: ctx.ip });
      await startSignedInSession(ctx, config, accountId);
      const owner = await findOwner(ctx.state.em, accountId);
      const hint = owner?.passwordHash ? '' : owner?.email ? ' Set a password under Account to sign in with your email next time.' : '';
      await redirectWithFlash(ctx, '/dashboard', `You are signed in.${hint}`);
    } catch (err) {
      const { message, status } = signInFailure(ctx, err);
      await renderPage(ctx, 'Sign-in link not valid', () => loginLinkFailedView(message), { status });
    }
  });

  router.post('/dashboard/sign-out', async (ctx) => {
    await endSession(ctx);
    ctx.status = 303;
    ctx.redirect('/dashboard/sign-in?signed_out=1');
  });

  return router;
}
