import Router from '@koa/router';
import { ApiError } from '../lib/errors';
import type { DownloadParams } from '../lib/job.types';
import { parseTimeString } from '../lib/time';
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
    const clipStart = p.clip_start === null ? null : parseTimeString(p.clip_start);
    const clipEnd = p.clip_end === null ? null : parseTimeString(p.clip_end);
    if (clipStart !== null && clipEnd !== null && clipEnd <= clipStart) {
      throw ApiError.unprocessable('clip_end must be after clip_start', [{ field: 'clip_end', message: 'must be after clip_start' }]);
    }
    if (p.quality === 'audio' && p.format && VIDEO_FORMATS.has(p.format)) {
      throw ApiError.unprocessable(`quality "audio" gives an audio-only file: use format mp3 or wav, or leave format out`, [{ field: 'format', message: 'must be mp3 or wav with quality audio' }]);
    }
    // Options are applied as denoise → trim_silence → normalize whatever their order here; duplicates are dropped.
    const processing = p.processing && p.processing.length > 0 ? [...new Set(p.processing)] : null;
    const params: DownloadParams = { ...p, processing };
    await createJob(ctx, deps, { jobType: 'download', cost: processing ? 2 : 1, params });
  });

  return router;
}
