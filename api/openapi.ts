import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

/** Routes register their request/response schemas here; the document is generated from it. */
export const registry = new OpenAPIRegistry();

registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', description: 'API key, `vc_…`' });

export const ErrorSchema = z
  .object({
    detail: z.string().meta({ example: 'clip_end: must be after clip_start' }),
    errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Error' });

const ERROR_TEXT: Record<number, string> = {
  400: 'The body is not a JSON object',
  401: 'Missing or invalid API key',
  402: 'Not enough credits',
  403: 'API key deactivated',
  404: 'Not found',
  409: 'Idempotency-Key reused with a different request, or still in progress; or the job has already ended',
  410: 'Link expired',
  415: 'The body is not JSON',
  422: 'Invalid parameter',
  429: 'Rate limit exceeded',
  503: 'Job engine unavailable',
};

/** Standard error responses, for route docs. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, { description: ERROR_TEXT[s] ?? 'Error', content: { 'application/json': { schema: ErrorSchema } } }]));
}

export const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });

let cached: object | null = null;

export function openApiDocument(baseUrl: string): object {
  cached ??= new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Media processing service', version: '1.0.0', description: 'Download, preview, transcribe, translate, fingerprint and read comments of media at public URLs.' },
    servers: [{ url: baseUrl }],
    security: [{ bearerAuth: [] }],
  });
  return cached;
}
