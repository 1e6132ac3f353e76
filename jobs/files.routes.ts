import path from 'node:path';
import Router, { type RouterContext } from '@koa/router';
import { z } from 'zod';
import { Job } from './entity';
import { hitRateLimit } from '../db/rate-limit.repository';
import { DomainError } from '../lib/errors';
import { rateLimited, setRateLimitHeaders } from '../api/auth.middleware';
import type { ApiDeps, ApiState } from '../api/context';
import { errorResponses, registry } from '../api/openapi';
import { byteRange, FILE_CONTENT_TYPES, jobFiles, linksSiblings, LINKED_TEXT_MAX, storedOutput, withSiblingLinks } from './outputs';

// Bytes first: generated clients take the first type and return a file. Every type the routes send is
// listed (binary as binary); a JSON result is described apart, as any JSON document.
const FILE_CONTENT = Object.fromEntries(
  ['application/octet-stream', ...new Set(Object.values(FILE_CONTENT_TYPES))].map((t) => [
    t,
    { schema: t === 'application/json' ? z.unknown().meta({ description: 'A JSON result file (transcript, translation, comments, fingerprint, storyboard)' }) : z.string().meta({ format: 'binary' }) },
  ]),
);

// A part of a file (206) has the file's type; a part of a JSON document is not a JSON document, so it has no schema to meet.
const PART_CONTENT = Object.fromEntries(
  ['application/octet-stream', ...new Set(Object.values(FILE_CONTENT_TYPES))].map((t) => [t, t === 'application/json' ? {} : { schema: z.string().meta({ format: 'binary' }) }]),
) as Record<string, { schema: z.ZodType }>;

registry.registerPath({
  method: 'get',
  path: '/v1/files/{token}',
  operationId: 'getResultFile',
  summary: 'Fetch a job output with the signed download_url (no Authorization header needed); a Range header gets that part of it (206)',
  security: [],
  request: { params: z.object({ token: z.string() }), headers: z.object({ range: z.string().optional().meta({ description: 'One byte range, e.g. bytes=0-1023 or bytes=-500' }) }) },
  responses: {
    200: {
      description:
        'The file, typed by its extension (Content-Type): video, audio, images, subtitles (SRT, VTT), or for transcripts, translations, comments and fingerprints a JSON document. Read the body as bytes; parse a JSON result yourself.',
      content: FILE_CONTENT,
    },
    302: { description: 'With S3_DOWNLOADS=redirect: Location is a presigned URL of the file in the bucket, valid for 5 minutes' },
    206: { description: 'The requested byte range of the file (Content-Range says which, and the file size), typed as the file is', content: PART_CONTENT },
    ...errorResponses(404, 410, 416, 429),
  },
});

registry.registerPath({
  method: 'get',
  path: '/v1/files/{token}/{name}',
  operationId: 'getResultFileByName',
  summary: "Fetch one of a job's files by name, with the same signed token as download_url (each entry of the job's files links here); a Range header gets part of it (206)",
  security: [],
  request: { params: z.object({ token: z.string(), name: z.string() }), headers: z.object({ range: z.string().optional() }) },
  responses: {
    200: { description: 'The file, typed by its extension (Content-Type), as for download_url', content: FILE_CONTENT },
    302: { description: 'With S3_DOWNLOADS=redirect: Location is a presigned URL of the file in the bucket, valid for 5 minutes' },
    206: { description: 'The requested byte range of the file (Content-Range says which, and the file size), typed as the file is', content: PART_CONTENT },
    ...errorResponses(404, 410, 416, 429),
  },
});

function downloadName(title: unknown, ext: string): string {
  const base = typeof title === 'string' ? title.replace(/[^\p{L}\p{N} ._-]+/gu, '').trim().slice(0, 100) : '';
  return `${base || 'output'}.${ext}`;
}

/** How long a presigned bucket URL a download link redirects to lives (S3_DOWNLOADS=redirect). */
const DIRECT_URL_SECONDS = 300;

/** Fetches of one download link per minute. */
export const FILE_LINK_REQUESTS_PER_MINUTE = 60;

export function filesRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  // the first file, or any of a job's files by name (GET /v1/files/{token}/{name})
  const serve = async (ctx: RouterContext<ApiState>, name: string | undefined): Promise<void> => {
    const check = deps.links.verify(ctx.params.token ?? '');
    if (!check.ok && check.reason === 'expired') throw new DomainError('gone', 'This download link has expired; create a new job to get the file again');
    if (!check.ok) throw DomainError.notFound('Unknown download link');
    // Limited per link, not per client: many people behind one address may fetch different results.
    const w = await hitRateLimit(ctx.state.em, `file:${check.jobId}`, FILE_LINK_REQUESTS_PER_MINUTE);
    setRateLimitHeaders(ctx, w);
    if (w.exceeded) throw rateLimited(w);
    const job = await ctx.state.em.findOne(Job, check.jobId);
    if (!job) throw DomainError.notFound('Unknown download link');
    const out = await storedOutput(deps.storage, job, Date.now(), name);
    if (!out.ok && out.reason === 'none') throw DomainError.notFound(name === undefined ? 'Unknown download link' : `This job has no file called ${name}; its files are listed in the job's files`);
    if (!out.ok && out.reason === 'expired') throw new DomainError('gone', 'This download link has expired; create a new job to get the file again');
    if (!out.ok) throw new DomainError('gone', 'The file behind this link is no longer stored; create a new job');
    const filename = name === undefined || out.relative === job.outputFile ? downloadName(job.resultData?.title, out.ext) : path.posix.basename(out.relative);
    // a file that names its siblings (a storyboard's WebVTT and JSON name the sprite) gets their links, so it is served from here
    const linked = linksSiblings(job) && (out.ext === 'vtt' || out.ext === 'json') ? await deps.storage.readOutputText(out.relative, LINKED_TEXT_MAX) : null;
    const body = linked === null ? null : Buffer.from(withSiblingLinks(linked, jobFiles(job, deps.links)));
    // S3_DOWNLOADS=redirect: the bucket serves the bytes (and ranges) under a URL that lives a few minutes
    const direct = body ? null : await deps.storage.directOutputUrl(out.relative, DIRECT_URL_SECONDS, filename);
    if (direct) {
      ctx.set('Cache-Control', 'private, no-store');
      ctx.redirect(direct);
      return;
    }
    const size = body ? body.length : out.size;
    const range = byteRange(ctx.get('Range') || undefined, size, ctx.get('If-Range') || undefined);
    if (range === 'unsatisfiable') {
      throw new DomainError('range_not_satisfiable', `The range ${ctx.get('Range')} starts past the end of the file, which is ${size} bytes`, { contentRange: `bytes */${size}` });
    }
    ctx.set('Content-Type', out.contentType);
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('Content-Disposition', `attachment; filename="${filename.replace(/[^\x20-\x7e]/g, '_').replace(/"/g, '')}"; filename*=UTF-8''${encodeURIComponent(filename)}`);
    ctx.set('Cache-Control', 'private, no-store');
    // players fetch a storyboard's files from pages of other origins
    if (body) ctx.set('Access-Control-Allow-Origin', '*');
    if (range) {
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
      ctx.set('Content-Length', String(range.end - range.start + 1));
      ctx.body = body ? body.subarray(range.start, range.end + 1) : await deps.storage.openOutput(out.relative, range);
      return;
    }
    ctx.set('Content-Length', String(size));
    ctx.body = body ?? (await deps.storage.openOutput(out.relative));
  };

  router.get('/v1/files/:token', (ctx) => serve(ctx, undefined));
  router.get('/v1/files/:token/:name', (ctx) => serve(ctx, ctx.params.name ?? ''));

  return router;
}
