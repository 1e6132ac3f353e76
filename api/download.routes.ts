import Router from '@koa/router';
import { ApiError } from '../lib/errors';
import type { DownloadParams } from '../lib/job.types';
import type { ApiDeps, ApiState } from './context';
import { createJob } from './jobs.service';
import { errorResponses, registry } from './openapi';
import { DownloadRequestSchema, IdempotencyHeaderSchema, JobCreatedSchema } from './schemas';
import { jsonBody, parseInput } from './validation';

registry.registerPath({
  method: 'post',
  path: '/v1/download',
  summary: 'Download video or audio (async job; 1 credit, 2 with processing)',
  request: { headers: IdempotencyHeaderSchema, body: { content: { 'application/json': { schema: DownloadRequestSchema } } } },
  responses: {
    202: { description: 'Job accepted', content: { 'application/json': { schema: JobCreatedSchema } } },
    ...errorResponses(400, 401, 402, 403, 409, 422, 429, 503),
  },
});

const VIDEO_FORMATS = new Set(['mp4', 'webm', 'mkv']);

export function downloadRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  router.post('/v1/download', async (ctx) => {
    const p = parseInput(DownloadRequestSchema, jsonBody(ctx));
    for (const field of ['clip_start', 'clip_end', 'processing'] as const) {
      const v = p[field];
      if (v !== null && !(Array.isArray(v) && v.length === 0)) {
        throw ApiError.unprocessable(`${field} is not available yet on this server; send the request without it`, [{ field, message: 'not available yet' }]);
      }
    }
    if (p.quality === 'audio' && p.format && VIDEO_FORMATS.has(p.format)) {
      throw ApiError.unprocessable(`quality "audio" gives an audio-only file: use format mp3 or wav, or leave format out`, [{ field: 'format', message: 'must be mp3 or wav with quality audio' }]);
    }
    const params: DownloadParams = { ...p, processing: null };
    await createJob(ctx, deps, { jobType: 'download', cost: 1, params });
  });

  return router;
}
