import fs from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import { z } from 'zod';
import { Job } from '../db/job.entity';
import { hitRateLimit } from '../db/rate-limit.repository';
import { DomainError } from '../lib/errors';
import { rateLimited, setRateLimitHeaders } from './auth.middleware';
import type { ApiDeps, ApiState } from './context';
import { errorResponses, registry } from './openapi';

/** Content type of a result file, by extension (also what MCP reports for job outputs). */
export const FILE_CONTENT_TYPES: Record<string, string> = {
  mp4: 'video/mp4',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  opus: 'audio/ogg',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  gif: 'image/gif',
  jpg: 'image/jpeg',
  json: 'application/json',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
};

registry.registerPath({
  method: 'get',
  path: '/v1/files/{token}',
  operationId: 'getResultFile',
  summary: 'Fetch a job output with the signed download_url (no Authorization header needed)',
  security: [],
  request: { params: z.object({ token: z.string() }) },
  // Bytes first: generated clients take the first type and return a file. Every type the route sends is
  // listed (binary as binary); a JSON result is described apart, as any JSON document.
  responses: {
    200: {
      description:
        'The file, typed by its extension (Content-Type): video, audio, images, subtitles (SRT, VTT), or for transcripts, translations, comments and fingerprints a JSON document. Read the body as bytes; parse a JSON result yourself.',
      content: Object.fromEntries(
        ['application/octet-stream', ...new Set(Object.values(FILE_CONTENT_TYPES))].map((t) => [
          t,
          { schema: t === 'application/json' ? z.unknown().meta({ description: 'A JSON result file (transcript, translation, comments, fingerprint)' }) : z.string().meta({ format: 'binary' }) },
        ]),
      ),
    },
    ...errorResponses(404, 410, 429),
  },
});

function downloadName(title: unknown, ext: string): string {
  const base = typeof title === 'string' ? title.replace(/[^\p{L}\p{N} ._-]+/gu, '').trim().slice(0, 100) : '';
  return `${base || 'output'}.${ext}`;
}

/** Fetches of one download link per minute. */
export const FILE_LINK_REQUESTS_PER_MINUTE = 60;

export function filesRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  router.get('/v1/files/:token', async (ctx) => {
    const check = deps.links.verify(ctx.params.token ?? '');
    if (!check.ok && check.reason === 'expired') throw new DomainError('gone', 'This download link has expired; create a new job to get the file again');
    if (!check.ok) throw DomainError.notFound('Unknown download link');
    // Limited per link, not per client: many people behind one address may fetch different results.
    const w = await hitRateLimit(ctx.state.em, `file:${check.jobId}`, FILE_LINK_REQUESTS_PER_MINUTE);
    setRateLimitHeaders(ctx, w);
    if (w.exceeded) throw rateLimited(w);
    const job = await ctx.state.em.findOne(Job, check.jobId);
    if (!job || job.status !== 'completed' || !job.outputFile) throw DomainError.notFound('Unknown download link');
    if (job.expiresAt && job.expiresAt.getTime() <= Date.now()) throw new DomainError('gone', 'This download link has expired; create a new job to get the file again');
    const file = deps.storage.filePath(job.outputFile);
    const stat = await fs.promises.stat(file).catch(() => null);
    if (!stat) throw new DomainError('gone', 'The file behind this link is no longer stored; create a new job');
    const ext = path.extname(file).slice(1).toLowerCase();
    ctx.set('Content-Type', FILE_CONTENT_TYPES[ext] ?? 'application/octet-stream');
    ctx.set('Content-Length', String(stat.size));
    const name = downloadName(job.resultData?.title, ext);
    ctx.set('Content-Disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]/g, '_').replace(/"/g, '')}"; filename*=UTF-8''${encodeURIComponent(name)}`);
    ctx.set('Cache-Control', 'private, no-store');
    ctx.body = fs.createReadStream(file);
  });

  return router;
}
