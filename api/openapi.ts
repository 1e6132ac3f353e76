import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

/** Routes register their request/response schemas here; the document is generated from it. */
export const registry = new OpenAPIRegistry();

export const bearerAuth = registry.registerComponent('securitySchemes', 'bearerAuth', {
  type: 'http',
  scheme: 'bearer',
  description: 'API key, `vc_…`',
});

export const ErrorSchema = z
  .object({
    detail: z.string().openapi({ example: 'clip_end must be after clip_start' }),
    errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  })
  .openapi('Error');

/** Standard error responses, for route docs. */
export function errorResponses(...statuses: number[]) {
  const text: Record<number, string> = {
    400: 'Body is not a JSON object',
    401: 'Missing or invalid API key',
    402: 'Not enough credits',
    403: 'API key deactivated',
    404: 'Not found',
    409: 'Idempotency-Key reused with a different request, or still in progress',
    410: 'Link expired',
    422: 'Invalid parameter',
    429: 'Rate limit exceeded',
    503: 'Job engine unavailable',
  };
  return Object.fromEntries(statuses.map((s) => [s, { description: text[s] ?? 'Error', content: { 'application/json': { schema: ErrorSchema } } }]));
}

let cached: object | null = null;

export function openApiDocument(baseUrl: string): object {
  cached ??= new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: '3.0.3',
    info: { title: 'Media processing service', version: '1.0.0', description: 'Download, preview, transcribe, translate, fingerprint and read comments of media at public URLs.' },
    servers: [{ url: baseUrl }],
    security: [{ bearerAuth: [] }],
  });
  return cached;
}
