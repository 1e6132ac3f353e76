import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { isUnmetered } from './metering';

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
  413: 'The body is larger than 1 MB',
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

registry.registerPath({
  method: 'get',
  path: '/healthz',
  operationId: 'health',
  summary: 'Liveness: the process answers (no database, never rate-limited)',
  security: [],
  responses: { 200: { description: 'Alive', ...json(z.object({ status: z.literal('ok') })) } },
});

let cached: object | null = null;

export function openApiDocument(baseUrl: string): object {
  cached ??= decorate(
    new OpenApiGeneratorV31(registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: { title: 'Media processing service', version: '1.0.0', description: 'Download, preview, transcribe, translate, fingerprint and read comments of media at public URLs.' },
      servers: [{ url: baseUrl }],
      security: [{ bearerAuth: [] }],
    }) as unknown as Document,
  );
  return cached;
}

type Operation = { operationId?: string; security?: unknown[]; requestBody?: unknown; responses: Record<string, { description: string; headers?: Record<string, unknown>; links?: Record<string, unknown>; content?: unknown }> };
type Document = { paths: Record<string, Record<string, Operation>> };

const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': integerHeader('Requests allowed per minute (per key; per client IP without a key)'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current one-minute window'),
  'X-RateLimit-Reset': integerHeader('Unix time (seconds) when the window resets'),
};
const link = (operationId: string, parameters: Record<string, string>, description: string) => ({ operationId, parameters, description });

/**
 * What every operation shares, added in one place: the rate-limit headers of metered responses,
 * Retry-After on 429, Location on 201/202, the statuses any authenticated or body-taking call can
 * return, and links from a created resource to the calls that use its id.
 */
function decorate(doc: Document): Document {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const op of Object.values(item)) {
      const authed = !(Array.isArray(op.security) && op.security.length === 0);
      const statuses = [...(authed ? [401, 403] : []), ...(isUnmetered(path) ? [] : [429]), ...(op.requestBody ? [400, 413, 415, 422] : [])];
      for (const s of statuses) op.responses[s] ??= errorResponses(s)[s] as Operation['responses'][string];
      for (const [status, res] of Object.entries(op.responses)) {
        const headers: Record<string, unknown> = { ...(isUnmetered(path) ? {} : RATE_LIMIT_HEADERS), ...res.headers };
        if (status === '429') headers['Retry-After'] = integerHeader('Seconds to wait before retrying');
        if (status === '201' || status === '202') headers.Location = { description: 'The created resource', schema: { type: 'string' } };
        if (Object.keys(headers).length) res.headers = headers;
      }
      if (op.operationId?.startsWith('create') && op.operationId.endsWith('Job')) {
        op.responses['202']!.links = {
          GetJob: link('getJob', { job_id: '$response.body#/job_id' }, 'Read the job'),
          CancelJob: link('cancelJob', { job_id: '$response.body#/job_id' }, 'Cancel the job'),
        };
      }
      if (op.operationId === 'createWebhook') {
        const id = { id: '$response.body#/id' };
        op.responses['201']!.links = {
          GetWebhook: link('getWebhook', id, 'Read the endpoint'),
          UpdateWebhook: link('updateWebhook', id, 'Change the endpoint'),
          ListWebhookDeliveries: link('listWebhookDeliveries', id, 'Its delivery log'),
          TestWebhook: link('testWebhook', id, 'Send a test delivery'),
          DeleteWebhook: link('deleteWebhook', id, 'Delete the endpoint'),
        };
      }
    }
  }
  return doc;
}
