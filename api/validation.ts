import type { z } from 'zod';
import { DomainError, type FieldError } from '../lib/errors';
import type { ApiContext } from './context';

/** Validates input against a zod schema; a 422 DomainError with a field list and a readable detail on failure. */
export function parseInput<S extends z.ZodType>(schema: S, data: unknown): z.output<S> {
  const res = schema.safeParse(data);
  if (res.success) return res.data;
  const errors: FieldError[] = res.error.issues.flatMap((i) => {
    const at = i.path.map(String).join('.');
    // strict schemas: one error per unknown field, named, so a typo is obvious
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => ({ field: at ? `${at}.${k}` : k, message: 'is not a parameter of this call' }));
    return [{ field: at || '(body)', message: i.message }];
  });
  // a message that is already a sentence about its field ("clip_end must be after clip_start") stands alone
  const detail = errors.map((e) => (e.field === '(body)' || e.message.startsWith(`${e.field} `) ? e.message : `${e.field}: ${e.message}`)).join('; ');
  throw DomainError.invalid(detail, errors);
}

export const NOT_AN_OBJECT = 'The request body is valid JSON but not a JSON object; send an object such as {"url": "…"}';

/** The parsed JSON body; 400 when it is not JSON or not a JSON object (an absent body is `{}`). */
export function jsonBody(ctx: ApiContext): Record<string, unknown> {
  const raw = (ctx.request as { rawBody?: string }).rawBody;
  const hasBody = raw !== undefined ? raw.trim().length > 0 : Number(ctx.request.length ?? 0) > 0;
  if (hasBody && !ctx.request.is('application/json', '+json')) {
    throw new DomainError('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json');
  }
  if (!hasBody) return {};
  const body: unknown = (ctx.request as { body?: unknown }).body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new DomainError('bad_request', NOT_AN_OBJECT);
  return body as Record<string, unknown>;
}
