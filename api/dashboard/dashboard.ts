// The web dashboard under /dashboard: server-rendered pages over the same services as the REST API.
// Its own chain, mounted before the API's JSON body parser: security headers → HTML errors → form
// bodies → session → CSRF → public pages (sign-in, assets) → signed-in pages.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type Koa from 'koa';
import { projectRoot } from '../../lib/config';
import { DomainError, type ErrorKind } from '../../lib/errors';
import type { ApiDeps, ApiState } from '../context';
import { deleteUpload, receiveUpload } from '../../uploads/service';
import { STATUS_OF } from '../error.middleware';
import { accountPages } from '../../accounts/dashboard.routes';
import { authPages } from './auth.routes';
import { jobsPages } from '../../jobs/dashboard.routes';
import { batchesPages } from '../../batches/dashboard.routes';
import { subscriptionsPages } from '../../subscriptions/dashboard.routes';
import { keysPages } from '../../keys/dashboard.routes';
import { overviewPages } from './overview.routes';
import { renderPage } from './render';
import { loadSession, requireCsrf, requireSignIn, type DashboardMiddleware, type DashboardState } from './session';
import { ERROR_TITLES, errorView } from './views/error.view';
import { webhooksPages } from '../../webhooks/dashboard.routes';

export const DASHBOARD_PREFIX = '/dashboard';

/** Runs middleware in order, as Koa would. */
function chain(middleware: DashboardMiddleware[]): DashboardMiddleware {
  return (ctx, next) => {
    const run = (i: number): Promise<void> => (i === middleware.length ? next() : Promise.resolve(middleware[i]!(ctx, () => run(i + 1))));
    return run(0);
  };
}

/** Pages and their data are private and never framed; scripts, styles and media come only from this service. */
function securityHeaders(publicBaseUrl: string): DashboardMiddleware {
  const files = new URL(publicBaseUrl).origin;
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: ${files}`,
    `media-src 'self' ${files}`,
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return async (ctx, next) => {
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    // Sign-in link tokens are in URLs: never send them on as a referrer.
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}

/** A client error from Koa or the body parser (413, 400…) as a DomainError; null for faults. */
function clientError(err: unknown): DomainError | null {
  if (err instanceof DomainError) return err;
  const e = err as { status?: number; expose?: boolean; message?: string };
  if (e.status && e.status < 500 && e.expose) {
    const kind = (Object.entries(STATUS_OF).find(([, s]) => s === e.status)?.[0] ?? 'bad_request') as ErrorKind;
    return new DomainError(kind, e.message ?? 'Bad request');
  }
  return null;
}

/**
 * Errors as pages: signed-out visitors go to sign-in (coming back afterwards), everything else is
 * an HTML page with the status; the small JSON endpoints answer JSON.
 */
function htmlErrors(log: (msg: string, err: unknown) => void): DashboardMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw DomainError.notFound('There is no dashboard page at this address.');
    } catch (err) {
      const e = clientError(err);
      if (!e) log(`${ctx.method} ${ctx.path} failed`, err);
      const status = e ? STATUS_OF[e.kind] : 500;
      const message = e?.detail ?? 'The dashboard could not complete this request. Try again, and contact your operator if it persists.';
      if (ctx.path.endsWith('.json')) {
        ctx.status = status;
        ctx.body = { detail: message };
        return;
      }
      if (e?.kind === 'unauthenticated') {
        const params = new URLSearchParams();
        if (ctx.method === 'GET') params.set('next', ctx.originalUrl);
        if (ctx.state.sessionExpired) params.set('expired', '1');
        ctx.status = 303;
        ctx.redirect(`/dashboard/sign-in${params.size ? `?${params.toString()}` : ''}`);
        return;
      }
      if (e?.extra.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(e.extra.retryAfterSeconds));
      await renderPage(ctx, ERROR_TITLES[status] ?? 'Error', (page) => errorView(page, message), { status });
    }
  };
}

const ASSET_TYPES: Record<string, string> = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.svg': 'image/svg+xml' };

/** Every file the pages use (CSS, script, icon), served from memory with an ETag: no CDN, nothing from elsewhere. */
function assetPages(): Router<DashboardState> {
  const dir = path.join(projectRoot, 'api/dashboard/assets');
  const assets = new Map(
    fs.readdirSync(dir).filter((f) => ASSET_TYPES[path.extname(f)]).map((f) => {
      const body = fs.readFileSync(path.join(dir, f));
      return [f, { body, type: ASSET_TYPES[path.extname(f)]!, etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }] as const;
    }),
  );
  const router = new Router<DashboardState>();
  router.get('/dashboard/assets/:file', (ctx) => {
    const asset = assets.get(ctx.params.file ?? '');
    if (!asset) throw DomainError.notFound('No such asset');
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', asset.etag);
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = asset.body;
  });
  return router;
}

const JOB_FORM = /^\/dashboard\/jobs\/new\/[a-z]+$/;

/**
 * A job form sent with a file (multipart): the file becomes an upload of the signed-in account and
 * its id the form's `upload_id`; the other fields are the form body. Without a session nothing is
 * read (the CSRF check refuses it), and an upload whose form then fails that check is deleted.
 */
function jobFormUploads(deps: ApiDeps): DashboardMiddleware {
  return async (ctx, next) => {
    const account = ctx.state.account;
    if (ctx.method !== 'POST' || !JOB_FORM.test(ctx.path) || !ctx.is('multipart/form-data') || !account || !ctx.state.session) return next();
    const { upload, fields } = await receiveUpload(ctx.state.em, deps, account, ctx.req, { fileField: 'file', formOnly: true });
    const body: Record<string, unknown> = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.length === 1 ? v[0] : v]));
    if (upload) body.upload_id = upload.upload_id;
    (ctx.request as { body?: unknown }).body = body;
    try {
      await next();
    } catch (err) {
      if (upload && err instanceof DomainError && err.kind === 'forbidden') await deleteUpload(ctx.state.em, deps, upload.upload_id);
      throw err;
    }
  };
}

/** The dashboard as one middleware: handles /dashboard and everything under it, passes the rest on. */
export function dashboard(deps: ApiDeps, log: (msg: string, err: unknown) => void): Koa.Middleware<ApiState> {
  const open = new Router<DashboardState>();
  for (const r of [assetPages(), authPages(deps.config)]) open.use(r.routes());
  const signedIn = new Router<DashboardState>();
  signedIn.use(requireSignIn());
  for (const r of [overviewPages(deps), keysPages(), jobsPages(deps), batchesPages(deps), subscriptionsPages(deps), webhooksPages(deps), accountPages(deps.config)]) signedIn.use(r.routes());

  const handle = chain([
    securityHeaders(deps.config.publicBaseUrl),
    htmlErrors(log),
    bodyParser({ enableTypes: ['form'], formLimit: '256kb', encoding: 'utf-8' }) as unknown as DashboardMiddleware,
    loadSession(),
    jobFormUploads(deps),
    requireCsrf(),
    open.routes() as unknown as DashboardMiddleware,
    signedIn.routes() as unknown as DashboardMiddleware,
  ]);
  return (ctx, next) => (ctx.path === DASHBOARD_PREFIX || ctx.path.startsWith(`${DASHBOARD_PREFIX}/`) ? handle(ctx as Koa.ParameterizedContext<DashboardState>, async () => undefined) : next());
}
