import type Koa from 'koa';
import { DEPENDENCY_RETRY_AFTER_SECONDS, dependencyFault, unavailableDetail } from '../lib/dependency-faults';
import { DomainError, type ErrorKind } from '../lib/errors';
import { log as logger } from '../lib/logger';

/** The one mapping from domain errors to HTTP statuses. */
export const STATUS_OF: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthenticated: 401,
  insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  invalid: 422,
  rate_limited: 429,
  upstream: 502,
  unavailable: 503,
  timeout: 504,
};

/** Renders every error as `{detail}` (422s add `errors`) with its status, keeping headers set earlier (rate limits). */
export function errorMiddleware(log: (msg: string, err: unknown) => void): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw DomainError.notFound(`No route for ${ctx.method} ${ctx.path}; see /v1/openapi.json`);
      }
    } catch (err) {
      const e = toDomainError(err);
      const status = e ? STATUS_OF[e.kind] : 500;
      // the service's own faults are logged with their stack, a dependency's in a line; what a client caused is not
      if (!e) log(`${ctx.method} ${ctx.path} failed`, err);
      else if (e.kind === 'unavailable' && !(err instanceof DomainError)) logger.warn({ err: err instanceof Error ? err.message : String(err) }, `${ctx.method} ${ctx.path} answered 503: ${dependencyFault(err)?.reason ?? 'a dependency is unavailable'}`);
      ctx.status = status;
      if (e?.kind === 'unauthenticated') ctx.set('WWW-Authenticate', 'Bearer');
      if ((e?.kind === 'rate_limited' || e?.kind === 'unavailable') && e.extra.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(e.extra.retryAfterSeconds));
      if (e?.extra.allow) ctx.set('Allow', e.extra.allow.join(', '));
      if (e?.extra.contentRange) ctx.set('Content-Range', e.extra.contentRange);
      const detail = e?.detail ?? 'Internal error; the request was not completed. Try again, and contact support if it persists.';
      if (OPENAI_COMPATIBLE.test(ctx.path)) {
        // OpenAI's statuses and error shape, so its SDKs raise their typed errors (a bad parameter is its 400)
        ctx.status = status === 422 ? 400 : status;
        ctx.body = openAiError(ctx.status, detail, e);
        return;
      }
      ctx.body = e?.extra.errors ? { detail, errors: e.extra.errors } : { detail };
    }
  };
}

/** Routes that speak OpenAI's API (api/openai). */
const OPENAI_COMPATIBLE = /^\/v1\/audio\//;

const OPENAI_CODES: Partial<Record<ErrorKind, string>> = {
  unauthenticated: 'invalid_api_key',
  rate_limited: 'rate_limit_exceeded',
  insufficient_credits: 'insufficient_quota',
  payload_too_large: 'file_too_large',
  unsupported_media_type: 'unsupported_file',
  not_found: 'not_found',
  gone: 'expired',
};

/** `{"error": {message, type, param, code}}`, as OpenAI answers. */
export function openAiError(status: number, message: string, e: DomainError | null, code?: string) {
  const type = status === 429 ? 'rate_limit_error' : status === 401 ? 'authentication_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: e?.extra.errors?.[0]?.field ?? null, code: code ?? (e ? (OPENAI_CODES[e.kind] ?? null) : null) } };
}

/**
 * A DomainError for anything a client caused (including Koa's and the body parser's own errors) and
 * for a dependency that is down (503 with Retry-After); null for the service's own faults.
 */
function toDomainError(err: unknown): DomainError | null {
  if (err instanceof DomainError) return err;
  const fault = dependencyFault(err);
  if (fault) return new DomainError('unavailable', unavailableDetail(fault), { retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS });
  const e = err as { status?: number; statusCode?: number; expose?: boolean; message?: string; type?: string };
  const status = e.status ?? e.statusCode;
  if (status === 400) return new DomainError('bad_request', e.expose && e.message ? e.message : 'The request is malformed');
  if (status && status < 500 && e.expose) {
    const kind = (Object.entries(STATUS_OF).find(([, s]) => s === status)?.[0] ?? 'bad_request') as ErrorKind;
    return new DomainError(kind, e.message ?? 'Bad request');
  }
  return null;
}
