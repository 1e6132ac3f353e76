import Router from '@koa/router';
import { z } from 'zod';
import type { PreviewParams } from '../lib/job.types';
import type { ApiDeps, ApiState } from './context';
import { createJob } from './jobs.service';
import { errorResponses, registry } from './openapi';
import { IdempotencyHeaderSchema, JobCreatedSchema, TimeString } from './schemas';
import { jsonBody, parseInput } from './validation';

export const PREVIEW_LIMITS = {
  width: { min: 16, max: 1920, default: 480 },
  gif: { duration: { default: 5, max: 15 }, fps: { default: 10, max: 20 } },
  clip: { duration: { default: 10, max: 30 } },
  mosaic: { columns: { default: 4, max: 8 }, rows: { default: 4, max: 8 } },
} as const;

const L = PREVIEW_LIMITS;
const int = (min: number, max: number) =>
  z
    .number({ error: `must be an integer from ${min} to ${max}` })
    .int(`must be an integer from ${min} to ${max}`)
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);
const seconds = (max: number) => z.number({ error: `must be a number of seconds, more than 0 and at most ${max}` }).positive('must be more than 0').max(max, `must be at most ${max}`);

const Width = int(L.width.min, L.width.max).default(L.width.default).openapi({ description: 'Output width in pixels (mosaic: the whole sheet); the height follows the aspect ratio' });
const Start = TimeString.nullable().default(null);

const BaseSchema = z.object({
  url: z.string({ error: 'is required' }).min(1, 'is required'),
  preview_type: z.enum(['gif', 'thumbnail', 'mosaic', 'clip'], { error: 'must be one of gif, thumbnail, mosaic, clip' }),
  webhook_url: z.string().nullable().default(null),
});

/** Per type, only the parameters that apply; the others are dropped unread (ignored, never an error). */
const TYPE_SCHEMAS = {
  gif: z.object({ start: Start, duration: seconds(L.gif.duration.max).default(L.gif.duration.default), width: Width, fps: int(1, L.gif.fps.max).default(L.gif.fps.default) }),
  thumbnail: z.object({ timestamp: TimeString.nullable().default(null), width: Width }),
  mosaic: z.object({ columns: int(1, L.mosaic.columns.max).default(L.mosaic.columns.default), rows: int(1, L.mosaic.rows.max).default(L.mosaic.rows.default), width: Width }),
  clip: z.object({ start: Start, duration: seconds(L.clip.duration.max).default(L.clip.duration.default), width: Width }),
};

/** The whole request, for the OpenAPI document. */
export const PreviewRequestSchema = BaseSchema.extend({
  timestamp: TimeString.nullable().optional().openapi({ description: 'thumbnail: frame time; default 25% of the duration' }),
  start: TimeString.nullable().optional().openapi({ description: 'gif, clip: start time; default 0' }),
  duration: z.number().optional().openapi({ description: 'gif: default 5, max 15; clip: default 10, max 30 (seconds)' }),
  width: Width.optional(),
  columns: z.number().int().optional().openapi({ description: 'mosaic: default 4, max 8' }),
  rows: z.number().int().optional().openapi({ description: 'mosaic: default 4, max 8' }),
  fps: z.number().int().optional().openapi({ description: 'gif: default 10, max 20' }),
}).openapi('PreviewRequest');

registry.registerPath({
  method: 'post',
  path: '/v1/preview',
  summary: 'GIF, thumbnail, mosaic (contact sheet) or short MP4 clip of a video (async job; 1 credit)',
  request: { headers: IdempotencyHeaderSchema, body: { content: { 'application/json': { schema: PreviewRequestSchema } } } },
  responses: {
    202: { description: 'Job accepted', content: { 'application/json': { schema: JobCreatedSchema } } },
    ...errorResponses(400, 401, 402, 403, 409, 422, 429, 503),
  },
});

/** Validates a preview request into its normalised parameters (non-applicable ones null). */
export function previewParams(body: Record<string, unknown>): PreviewParams {
  const base = parseInput(BaseSchema, body);
  const params: PreviewParams = { ...base, timestamp: null, start: null, duration: null, width: L.width.default, columns: null, rows: null, fps: null };
  return { ...params, ...parseInput(TYPE_SCHEMAS[base.preview_type], body) };
}

export function previewRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.post('/v1/preview', async (ctx) => {
    const params = previewParams(jsonBody(ctx));
    await createJob(ctx, deps, { jobType: 'preview', cost: 1, params });
  });
  return router;
}
