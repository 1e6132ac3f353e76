import type Koa from 'koa';
import { ApiError } from '../lib/errors';

/** Renders every error as `{detail}` with its status, keeping headers set earlier (rate limits). */
export function errorMiddleware(log: (msg: string, err: unknown) => void): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw ApiError.notFound(`No route for ${ctx.method} ${ctx.path}; see /v1/openapi.json`);
      }
    } catch (err) {
      const apiErr = toApiError(err);
      if (apiErr.status >= 500) log(`${ctx.method} ${ctx.path} failed`, err);
      ctx.status = apiErr.status;
      for (const [k, v] of Object.entries(apiErr.extra.headers ?? {})) ctx.set(k, v);
      ctx.body = apiErr.extra.errors ? { detail: apiErr.detail, errors: apiErr.extra.errors } : { detail: apiErr.detail };
    }
  };
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { status?: number; statusCode?: number; expose?: boolean; message?: string; type?: string };
  const status = e.status ?? e.statusCode;
  if (status === 400 || e.type === 'entity.parse.failed') return ApiError.badRequest('The request body is not valid JSON');
  if (status === 413) return new ApiError(413, 'The request body is too large');
  if (status === 415) return new ApiError(415, 'Send the request body as JSON with Content-Type: application/json');
  if (status && status < 500 && e.expose) return new ApiError(status, e.message ?? 'Bad request');
  return new ApiError(500, 'Internal error; the request was not completed. Try again, and contact support if it persists.');
}
