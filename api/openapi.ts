import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { DOWNLOAD_FORMATS } from '../operations/download/spec';
import { JOB_TYPES, OPERATIONS } from '../operations/registry';
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
  404: 'Not found (on a create call: an upload_id of no upload of this account)',
  409: 'Idempotency-Key reused with a different request, or still in progress; or the job has already ended',
  410: 'Link or upload expired',
  413: 'The body is larger than 1 MB',
  415: 'The body is not JSON',
  416: 'The Range lies outside the file (Content-Range says its size)',
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
      info: {
        title: 'Media processing service',
        version: '1.0.0',
        description: 'Download, preview, transcribe, translate, fingerprint and read comments of media at public URLs.',
        license: { name: 'Proprietary: use under the terms of your mediasvc account' },
      },
      tags: TAGS.map(({ name, description }) => ({ name, description })),
      servers: [{ url: baseUrl }],
      security: [{ bearerAuth: [] }],
    }) as unknown as Document,
  );
  return cached;
}

/** Areas of the API, in the order documentation shows them; each path belongs to the first whose prefix it starts with. */
const TAGS = [
  { name: 'Operations', description: `Create a job: ${JOB_TYPES.join(', ')}`, prefixes: Object.values(OPERATIONS).map((op) => op.path) },
  { name: 'OpenAI-compatible audio', description: 'OpenAI\'s /audio/transcriptions and /audio/translations: its SDKs work with base_url pointed here', prefixes: ['/v1/audio/'] },
  { name: 'Uploads', description: 'Files sent to use as a job\'s source (upload_id in place of url)', prefixes: ['/v1/uploads'] },
  { name: 'Jobs', description: 'Follow, list and cancel jobs', prefixes: ['/v1/jobs'] },
  { name: 'Batches', description: 'One operation on every item of a playlist, channel, feed, page or URL list, each item an ordinary job', prefixes: ['/v1/batches'] },
  { name: 'Subscriptions', description: 'Channels, playlists and feeds watched on a Temporal Schedule: each new item runs the operation once', prefixes: ['/v1/subscriptions'] },
  { name: 'Files', description: 'Result files behind signed download links', prefixes: ['/v1/files'] },
  { name: 'Info', description: 'Synchronous reads: video metadata, translation languages', prefixes: ['/v1/info', '/v1/languages'] },
  { name: 'Webhooks', description: 'Endpoints that receive signed job and batch events, and their delivery logs', prefixes: ['/v1/webhooks'] },
  { name: 'Account', description: 'Plan, balance, usage and jobs in flight of the key\'s account', prefixes: ['/v1/account'] },
  { name: 'Health', description: 'Liveness and readiness probes', prefixes: ['/healthz', '/readyz'] },
] as const;

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/**
 * Enums that generated clients should see as one named type wherever they appear, nullable or not
 * (zod-to-openapi inlines an enum behind .nullable().default(), and a client then makes a class per use).
 */
const NAMED_ENUMS: Record<string, readonly string[]> = { DownloadFormat: DOWNLOAD_FORMATS };

function nameEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nameEnums);
  if (!node || typeof node !== 'object') return node;
  const obj = node as Record<string, unknown>;
  if (Array.isArray(obj.enum)) {
    const values = obj.enum.filter((v) => v !== null);
    const name = Object.keys(NAMED_ENUMS).find((n) => NAMED_ENUMS[n]!.length === values.length && NAMED_ENUMS[n]!.every((v, i) => v === values[i]));
    if (name) {
      const { enum: _enum, type: _type, ...rest } = obj;
      const ref = { $ref: `#/components/schemas/${name}` };
      return values.length < obj.enum.length ? { ...rest, anyOf: [ref, { type: 'null' }] } : { ...rest, ...ref };
    }
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, nameEnums(v)]));
}

type Operation = { operationId?: string; tags?: string[]; security?: unknown[]; requestBody?: unknown; responses: Record<string, { description: string; headers?: Record<string, unknown>; links?: Record<string, unknown>; content?: unknown }> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

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
function decorate(generated: Document): Document {
  const doc = nameEnums(generated) as Document;
  for (const [name, values] of Object.entries(NAMED_ENUMS)) doc.components.schemas[name] = { type: 'string', enum: [...values] };
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const op of Object.values(item)) {
      const authed = !(Array.isArray(op.security) && op.security.length === 0);
      const statuses = [...(authed ? [401, 403] : []), ...(isUnmetered(path) ? [] : [429]), ...(op.requestBody ? [400, 413, 415, 422] : [])];
      // added after generation, so as JSON Schema referring to the Error component, not as zod
      for (const s of statuses) op.responses[s] ??= { description: ERROR_TEXT[s] ?? 'Error', content: { 'application/json': { schema: ERROR_REF } } };
      const tag = TAGS.find((t) => t.prefixes.some((p) => path.startsWith(p)));
      if (!tag) throw new Error(`no OpenAPI tag covers ${path}`);
      op.tags = [tag.name];
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
