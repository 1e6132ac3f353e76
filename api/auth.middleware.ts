import type Koa from 'koa';
import { PLANS } from '../accounts/entity';
import { authenticate } from '../accounts/repository';
import { recordKeyUsage } from '../keys/usage.repository';
import { hitRateLimit, type RateWindow } from '../db/rate-limit.repository';
import { DomainError } from '../lib/errors';
import type { ApiState } from './context';

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : '';
}

/**
 * Identifies the caller and counts the request against its one-minute window: per key at the
 * plan's rate, or per client IP at the Free rate when the key is missing or unknown; a deactivated
 * key gets its 403 here, before any counting. Sets the
 * X-RateLimit-* headers on every response.
 */
export function rateLimitMiddleware(): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    const raw = bearer(ctx.get('Authorization') || undefined);
    const auth = raw === undefined ? ({ ok: false, reason: 'missing' } as const) : await authenticate(ctx.state.em, raw || undefined);
    ctx.state.stages?.mark('key');
    ctx.state.auth = auth.ok || raw !== '' ? auth : { ok: false, reason: 'invalid' };
    // A known but deactivated key is answered by authentication before any window is counted.
    if (!auth.ok && auth.reason === 'inactive') throw deactivated();
    const [bucket, limit] = auth.ok ? [keyBucket(auth.keyId), PLANS[auth.plan].requestsPerMinute] : [`ip:${ctx.ip}`, PLANS.free.requestsPerMinute];
    const w = await hitRateLimit(ctx.state.em, bucket, limit);
    ctx.state.stages?.mark('rate');
    setRateLimitHeaders(ctx, w);
    if (w.exceeded) {
      // the key may have been deactivated elsewhere (the CLI, another API process) since it was cached:
      // what is true of the key is answered before its window
      const stored = auth.ok && raw ? await authenticate(ctx.state.em, raw, { fresh: true }) : auth;
      if (!stored.ok && stored.reason === 'inactive') throw deactivated();
      if (auth.ok && !stored.ok) throw invalidKey();
      throw rateLimited(w);
    }
    await next();
  };
}

const keyBucket = (keyId: string) => `key:${keyId}`;

/**
 * Counts `count` more requests of an authenticated caller (the messages of an MCP batch after its
 * first, which the middleware counted) and says how many of them the window still admits.
 */
export async function countMoreRequests(ctx: Koa.ParameterizedContext<ApiState>, count: number): Promise<{ admitted: number; window: RateWindow }> {
  const key = ctx.state.apiKey!;
  const limit = PLANS[ctx.state.account!.plan].requestsPerMinute;
  const w = await hitRateLimit(ctx.state.em, keyBucket(key.id), limit, Date.now(), count);
  setRateLimitHeaders(ctx, w);
  return { admitted: Math.max(0, Math.min(count, limit - (w.total - count))), window: w };
}

/** The X-RateLimit-* headers of a window (on every metered response, errors included). */
export function setRateLimitHeaders(ctx: Koa.Context | Koa.ParameterizedContext<ApiState>, w: RateWindow): void {
  ctx.set('X-RateLimit-Limit', String(w.limit));
  ctx.set('X-RateLimit-Remaining', String(w.remaining));
  ctx.set('X-RateLimit-Reset', String(w.reset));
}

/** The 429 for an exceeded window, with Retry-After. */
export function rateLimited(w: RateWindow): DomainError {
  const wait = Math.max(1, w.reset - Math.floor(Date.now() / 1000));
  return new DomainError('rate_limited', `Rate limit of ${w.limit} requests per minute exceeded; retry in ${wait} s`, { retryAfterSeconds: wait });
}

/** The 403 for a key that exists but is deactivated. */
function deactivated(): DomainError {
  return new DomainError('forbidden', 'This API key is deactivated; reactivate it or use another key');
}

function invalidKey(): DomainError {
  return new DomainError('unauthenticated', 'Invalid API key: the key is malformed or matches no active key');
}

/** 401 for a missing, malformed or unknown key; 403 for a deactivated one. Records key usage (buffered). */
export function requireAuth(): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    if (!auth || !auth.ok) {
      if (auth?.reason === 'inactive') throw deactivated();
      if (auth?.reason === 'missing') throw new DomainError('unauthenticated', 'Missing API key: send the header Authorization: Bearer vc_…');
      throw invalidKey();
    }
    // hydrated when a route asks for them
    Object.defineProperties(ctx.state, {
      account: { get: () => auth.account, configurable: true, enumerable: true },
      apiKey: { get: () => auth.key, configurable: true, enumerable: true },
    });
    recordKeyUsage(ctx.state.em, auth.keyId);
    await next();
  };
}
