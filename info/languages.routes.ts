import Router from '@koa/router';
import { z } from 'zod';
import type { ApiDeps, ApiState } from '../api/context';
import { errorResponses, json, registry } from '../api/openapi';
import { languagesOverview } from '../engines/speech/capabilities';
import { currentYtdlp } from '../engines/ytdlp/current-version';

const LanguagesSchema = z
  .object({
    transcription: z.object({
      languages: z.array(z.string()),
      model_sizes: z.array(z.string()),
      models: z.array(z.object({ name: z.string(), size: z.string(), english_only: z.boolean() })),
    }),
    translation: z.object({
      engine: z.string(),
      speech_to_english: z.boolean(),
      direct_pairs: z.array(z.object({ from: z.string(), to: z.string() })),
      pairs: z.array(z.object({ from: z.string(), to: z.string(), route: z.array(z.string()) })),
      pair_count: z.number().int(),
      targets_from_any_speech: z.array(z.string()),
    }),
    tools: z.object({
      yt_dlp: z.string().meta({ description: 'The yt-dlp version new steps read sources with (operators update it without a release: mediasvc tools yt-dlp update)' }),
    }),
  })
  .meta({ id: 'Languages' });

registry.registerPath({
  method: 'get',
  path: '/v1/languages',
  operationId: 'listLanguages',
  summary: 'Transcription languages, installed model sizes and translation pairs (free)',
  responses: { 200: { description: 'What this server transcribes and translates', ...json(LanguagesSchema) }, ...errorResponses(401, 403, 429) },
});

export function languagesRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.get('/v1/languages', (ctx) => {
    ctx.body = { ...languagesOverview(deps.speech), tools: { yt_dlp: currentYtdlp(deps.config).version } } satisfies z.infer<typeof LanguagesSchema>;
  });
  return router;
}
