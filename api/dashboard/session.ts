// Dashboard sessions: a random token in an HttpOnly, SameSite=Lax cookie (Secure behind https), the
// session itself server-side (dashboard_sessions, keyed by the token's SHA-256), a per-session CSRF
// token checked on every POST.
import crypto from 'node:crypto';
import type Koa from 'koa';
import { Account } from '../../accounts/entity';
import type { DashboardSession } from '../../accounts/owner.entity';
import { createSession, deleteSession, findSession, setFlash } from '../../accounts/owners.repository';
import type { Config } from '../../lib/config';
import { DomainError } from '../../lib/errors';
import type { ApiState } from '../context';

export const SESSION_COOKIE = 'mediasvc_session';
const COOKIE_PATH = '/dashboard';
/** Anonymous sessions only carry the sign-in forms' CSRF token. */
const ANONYMOUS_TTL_MS = 60 * 60_000;

export interface DashboardState extends ApiState {
  session?: DashboardSession;
  /** The cookie named a session whose time ran out (the sign-in page says so). */
  sessionExpired?: boolean;
}

export type DashboardContext = Koa.ParameterizedContext<DashboardState>;
export type DashboardMiddleware = Koa.Middleware<DashboardState>;

/** Secure cookies when the service is reached over https, directly or as configured behind a proxy. */
function isHttps(ctx: DashboardContext, config: Pick<Config, 'publicBaseUrl'>): boolean {
  return ctx.secure || config.publicBaseUrl.startsWith('https:');
}

function setSessionCookie(ctx: DashboardContext, config: Pick<Config, 'publicBaseUrl'>, token: string, expiresAt: Date): void {
  const attrs = [`${SESSION_COOKIE}=${token}`, `Path=${COOKIE_PATH}`, `Expires=${expiresAt.toUTCString()}`, 'HttpOnly', 'SameSite=Lax'];
  if (isHttps(ctx, config)) attrs.push('Secure');
  ctx.append('Set-Cookie', attrs.join('; '));
}

function clearSessionCookie(ctx: DashboardContext): void {
  ctx.append('Set-Cookie', `${SESSION_COOKIE}=; Path=${COOKIE_PATH}; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax`);
}

/** Loads the session and its account from the cookie; an expired session is deleted and remembered as such. */
export function loadSession(): DashboardMiddleware {
  return async (ctx, next) => {
    const token = ctx.cookies.get(SESSION_COOKIE);
    const session = token ? await findSession(ctx.state.em, token) : null;
    if (session && session.expiresAt.getTime() <= Date.now()) {
      await deleteSession(ctx.state.em, session);
      clearSessionCookie(ctx);
      ctx.state.sessionExpired = session.accountId !== null;
    } else if (session) {
      ctx.state.session = session;
      const account = session.accountId ? await ctx.state.em.findOne(Account, session.accountId) : null;
      if (account) ctx.state.account = account;
    }
    await next();
  };
}

/** The current session, starting an anonymous one for a signed-out visitor (a form needs its CSRF token). */
export async function ensureSession(ctx: DashboardContext, config: Pick<Config, 'publicBaseUrl'>): Promise<DashboardSession> {
  if (ctx.state.session) return ctx.state.session;
  const { token, session } = await createSession(ctx.state.em, null, ANONYMOUS_TTL_MS);
  setSessionCookie(ctx, config, token, session.expiresAt);
  ctx.state.session = session;
  return session;
}

/** Replaces whatever session there was with a new signed-in one (a new token and CSRF token: no session fixation). */
export async function startSignedInSession(ctx: DashboardContext, config: Pick<Config, 'publicBaseUrl' | 'dashboardSessionTtlMs'>, accountId: string): Promise<void> {
  if (ctx.state.session) await deleteSession(ctx.state.em, ctx.state.session);
  const { token, session } = await createSession(ctx.state.em, accountId, config.dashboardSessionTtlMs);
  setSessionCookie(ctx, config, token, session.expiresAt);
  ctx.state.session = session;
}

export async function endSession(ctx: DashboardContext): Promise<void> {
  if (ctx.state.session) await deleteSession(ctx.state.em, ctx.state.session);
  ctx.state.session = undefined;
  ctx.state.account = undefined;
  clearSessionCookie(ctx);
}

/** The signed-in account; requireSignIn has run before any route that calls this. */
export function signedInAccount(ctx: DashboardContext): Account {
  if (!ctx.state.account) throw new Error('route is missing requireSignIn');
  return ctx.state.account;
}

/** The form field that carries the session's CSRF token. */
export const CSRF_FIELD = '_csrf';

function tokensMatch(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/**
 * Every state-changing request (anything but GET/HEAD) must carry the session's CSRF token in the
 * form field `_csrf` or the `X-CSRF-Token` header; otherwise 403 and nothing happens.
 */
export function requireCsrf(): DashboardMiddleware {
  return async (ctx, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return next();
    const session = ctx.state.session;
    if (!session && ctx.state.sessionExpired) throw new DomainError('unauthenticated', 'Your session has expired; sign in again');
    const body = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
    const given = body[CSRF_FIELD] ?? ctx.get('X-CSRF-Token');
    if (!session || !tokensMatch(given, session.csrfToken)) {
      throw new DomainError('forbidden', 'This form is out of date or was not sent from the dashboard (its security token is missing or wrong). Reload the page and try again.');
    }
    await next();
  };
}

/** Signed-out visitors go to the sign-in page, coming back here afterwards. */
export function requireSignIn(): DashboardMiddleware {
  return async (ctx, next) => {
    if (ctx.state.account) return next();
    throw new DomainError('unauthenticated', ctx.state.sessionExpired ? 'Your session has expired; sign in again' : 'Sign in to continue');
  };
}

/** A one-line message for the next page: a success (green) or an error (red, announced as an alert). */
export interface Flash {
  kind: 'success' | 'error';
  text: string;
}

// stored as text in the session row: an error carries this prefix, a success is the bare sentence
const ERROR_PREFIX = 'error\u0000';

/** Remembers a one-line message for the next page shown to this session. */
export async function flash(ctx: DashboardContext, message: string, kind: Flash['kind'] = 'success'): Promise<void> {
  if (ctx.state.session) await setFlash(ctx.state.em, ctx.state.session, kind === 'error' ? ERROR_PREFIX + message : message);
}

/** The pending message, cleared once read. */
export async function takeFlash(ctx: DashboardContext): Promise<Flash | null> {
  const stored = ctx.state.session?.flash ?? null;
  if (!stored) return null;
  if (ctx.state.session) await setFlash(ctx.state.em, ctx.state.session, null);
  return stored.startsWith(ERROR_PREFIX) ? { kind: 'error', text: stored.slice(ERROR_PREFIX.length) } : { kind: 'success', text: stored };
}
