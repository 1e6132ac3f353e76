import type { z } from 'zod';
import { ApiError, type FieldError } from '../lib/errors';
import type { ApiContext } from './context';

/** Validates input against a zod schema; 422 with a field list and a readable detail on failure. */
export function parseInput<S extends z.ZodType>(schema: S, data: unknown): z.infer<S> {
  const res = schema.safeParse(data);
  if (res.success) return res.data;
  const errors: FieldError[] = res.error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
  const detail = errors.map((e) => (e.field === '(body)' ? e.message : `${e.field}: ${e.message}`)).join('; ');
  throw ApiError.unprocessable(detail, errors);
}

/** The parsed JSON body; 400 when the body is not JSON or not a JSON object. */
export function jsonBody(ctx: ApiContext): Record<string, unknown> {
  const raw = (ctx.request as { rawBody?: string }).rawBody;
  const hasBody = raw !== undefined ? raw.trim().length > 0 : Number(ctx.request.length ?? 0) > 0;
  if (hasBody && !ctx.request.is('application/json', '+json')) {
    throw ApiError.badRequest('Send the request body as JSON with Content-Type: application/json');
  }
  const body: unknown = (ctx.request as { body?: unknown }).body;
  if (!hasBody) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw ApiError.badRequest('The request body must be a JSON object');
  return body as Record<string, unknown>;
}
