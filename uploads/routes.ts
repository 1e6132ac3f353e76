// POST /v1/uploads (a file as a job's source) and GET /v1/uploads/{upload_id}.
import Router from '@koa/router';
import { z } from 'zod';
import { requireAuth } from '../api/auth.middleware';
import type { ApiDeps, ApiState } from '../api/context';
import { accountOf } from '../api/context';
import { errorResponses, json, registry } from '../api/openapi';
import { Timestamp } from '../api/schemas';
import { createUpload, findAccountUpload, presentUpload } from './service';

export const UploadSchema = z
  .object({
    upload_id: z.string().meta({ example: 'upl_3mZ8qK1vT0bXy7PcLr2sWn4A' }),
    filename: z.string().meta({ description: 'The name the client gave (multipart filename, or Content-Disposition of a raw body); "upload" if none' }),
    size: z.number().int(),
    content_type: z.string().meta({ description: 'What the content was found to be (ffprobe), not what the client declared', example: 'video/mp4' }),
    created_at: Timestamp,
    expires_at: Timestamp.meta({ description: 'After this the upload is deleted; jobs must be created before it (same lifetime as result links)' }),
  })
  .meta({ id: 'Upload' });

const UploadIdParam = z.object({ upload_id: z.string() });

registry.registerPath({
  method: 'post',
  path: '/v1/uploads',
  operationId: 'createUpload',
  summary: 'Send a media file to use as a job\'s source (`upload_id` in place of `url`); streamed to storage, free',
  description:
    'Either `multipart/form-data` with the file in the field `file`, or the raw bytes as the body with their `Content-Type` ' +
    '(and optionally `Content-Disposition: attachment; filename="…"`). The size limit is the plan\'s source limit: a larger ' +
    'declared `Content-Length` is refused at once, a longer body as soon as it passes the limit. Content that is not audio or video gets 415.',
  request: {
    body: {
      required: true,
      content: {
        'multipart/form-data': { schema: z.object({ file: z.string().meta({ format: 'binary', description: 'The media file' }) }) },
        'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) },
      },
    },
  },
  responses: {
    201: { description: 'Stored', ...json(UploadSchema) },
    ...errorResponses(400, 401, 403, 413, 415, 422, 429),
  },
});
registry.registerPath({
  method: 'get',
  path: '/v1/uploads/{upload_id}',
  operationId: 'getUpload',
  summary: 'Read one upload of this account (free)',
  request: { params: UploadIdParam },
  responses: { 200: { description: 'The upload', ...json(UploadSchema) }, ...errorResponses(401, 403, 404, 410, 429) },
});

/** Uploads: authenticated, but outside the idempotency layer (it hashes JSON bodies; these are streams). */
export function uploadsRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.use(['/v1/uploads', '/v1/uploads/:upload_id'], requireAuth());
  router.post('/v1/uploads', async (ctx) => {
    try {
      const upload = await createUpload(ctx.state.em, deps, accountOf(ctx), ctx.req);
      ctx.status = 201;
      ctx.set('Location', `/v1/uploads/${upload.upload_id}`);
      ctx.body = upload;
    } catch (err) {
      // the rest of a refused body is not read: the connection closes after the answer
      if (!ctx.req.complete) ctx.set('Connection', 'close');
      throw err;
    }
  });
  router.get('/v1/uploads/:upload_id', async (ctx) => {
    ctx.body = presentUpload(await findAccountUpload(ctx.state.em, accountOf(ctx), ctx.params.upload_id ?? '', 'upload_id'));
  });
  return router;
}
