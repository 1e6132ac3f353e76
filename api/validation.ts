import { DomainError } from '../lib/errors';
import type { ApiContext } from './context';

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
