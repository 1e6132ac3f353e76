import Router from '@koa/router';
import { z } from 'zod';
import { WHISPER_LANGUAGES } from '../engines/speech/languages';
import { MODEL_SIZES, ModelSelectionError } from '../engines/speech/model-registry';
import { createSpeechServices, type SpeechServices } from '../engines/speech/services';
import { planSpeechTranslation, targetReachable, targetsFromAnySpeech } from '../engines/translate/speech-plan';
import { planRoute, reachablePairs } from '../engines/translate/translation-engine';
import { ApiError } from '../lib/errors';
import type { TranscribeParams, TranslateParams } from '../lib/job.types';
import type { ApiDeps, ApiState } from './context';
import { createJob } from './jobs.service';
import { errorResponses, registry } from './openapi';
import { IdempotencyHeaderSchema, JobCreatedSchema } from './schemas';
import { jsonBody, parseInput } from './validation';

const LanguageCode = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{2,3}$/, 'must be an ISO 639-1 language code such as "en" or "fr"');

const OutputFormat = z.enum(['json', 'srt', 'vtt']).default('json');
const ModelSize = z.enum(MODEL_SIZES).default('base');

export const TranscribeRequestSchema = z
  .object({
    url: z.string({ error: 'is required' }).min(1, 'is required'),
    language: LanguageCode.nullable().default(null).openapi({ description: 'ISO 639-1; null detects it from the first 30 s of speech' }),
    output_format: OutputFormat,
    word_timestamps: z.boolean().default(true).openapi({ description: 'word-level timestamps; JSON output only' }),
    model_size: ModelSize.openapi({ description: 'a size with no model installed on this server gets 422 (GET /v1/languages lists the installed ones)' }),
    webhook_url: z.string().nullable().default(null),
  })
  .openapi('TranscribeRequest');

export const TranslateRequestSchema = z
  .object({
    url: z.string({ error: 'is required' }).min(1, 'is required'),
    target_language: LanguageCode,
    source_language: LanguageCode.nullable().default(null).openapi({ description: 'ISO 639-1; null detects it' }),
    output_format: OutputFormat,
    model_size: ModelSize,
    webhook_url: z.string().nullable().default(null),
  })
  .openapi('TranslateRequest');

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
  })
  .openapi('Languages');

const created = {
  202: { description: 'Job accepted', content: { 'application/json': { schema: JobCreatedSchema } } },
  ...errorResponses(400, 401, 402, 403, 409, 422, 429, 503),
};
registry.registerPath({
  method: 'post',
  path: '/v1/transcribe',
  summary: 'Transcribe speech to text: JSON with timestamps, SRT or VTT (async job; 4 credits)',
  request: { headers: IdempotencyHeaderSchema, body: { content: { 'application/json': { schema: TranscribeRequestSchema } } } },
  responses: created,
});
registry.registerPath({
  method: 'post',
  path: '/v1/translate',
  summary: 'Transcribe and translate speech into a target language (async job; 5 credits)',
  request: { headers: IdempotencyHeaderSchema, body: { content: { 'application/json': { schema: TranslateRequestSchema } } } },
  responses: created,
});
registry.registerPath({
  method: 'get',
  path: '/v1/languages',
  summary: 'Transcription languages, installed model sizes and translation pairs (free)',
  responses: { 200: { description: 'What this server transcribes and translates', content: { 'application/json': { schema: LanguagesSchema } } }, ...errorResponses(401, 403, 429) },
});

const WHISPER = new Set(WHISPER_LANGUAGES);

export function speechRoutes(deps: ApiDeps, services: SpeechServices = createSpeechServices(deps.config)): Router<ApiState> {
  const router = new Router<ApiState>();
  const { registry: models, translator } = services;

  const spoken = (field: string, code: string | null) => {
    if (code !== null && !WHISPER.has(code)) {
      throw ApiError.unprocessable(`${field} "${code}" is not a language Whisper recognises; GET /v1/languages lists them`, [{ field, message: 'unsupported language' }]);
    }
  };
  const model = (size: TranscribeParams['model_size'], language: string | null, field: string) => {
    try {
      models.select(size, language, field);
    } catch (err) {
      if (err instanceof ModelSelectionError) throw ApiError.unprocessable(err.message, [{ field: 'model_size', message: 'not installed' }]);
      throw err;
    }
  };

  router.post('/v1/transcribe', async (ctx) => {
    const p = parseInput(TranscribeRequestSchema, jsonBody(ctx));
    spoken('language', p.language);
    model(p.model_size, p.language, 'model_size');
    const params: TranscribeParams = { ...p, word_timestamps: p.word_timestamps };
    await createJob(ctx, deps, { jobType: 'transcribe', cost: 4, params });
  });

  router.post('/v1/translate', async (ctx) => {
    const p = parseInput(TranslateRequestSchema, jsonBody(ctx));
    spoken('source_language', p.source_language);
    const pairs = translator.pairs();
    const fromAny = targetsFromAnySpeech(pairs);
    const ok = p.source_language ? planSpeechTranslation(pairs, p.source_language, p.target_language) !== null : targetReachable(pairs, p.target_language);
    if (!ok) {
      const from = p.source_language ? ` from "${p.source_language}"` : '';
      const into = [...new Set(pairs.map((q) => q.to))].sort();
      throw ApiError.unprocessable(
        `No translation path${from} to "${p.target_language}" on this server. Any speech can be translated into: ${fromAny.join(', ')}; ` +
          `text translation reaches: ${into.join(', ') || 'none'} (GET /v1/languages lists every pair)`,
        [{ field: 'target_language', message: 'no translation path' }],
      );
    }
    model(p.model_size, p.source_language, 'model_size');
    const params: TranslateParams = { ...p };
    await createJob(ctx, deps, { jobType: 'translate', cost: 5, params });
  });

  router.get('/v1/languages', (ctx) => {
    const pairs = translator.pairs();
    const reachable = reachablePairs(pairs).map((q) => ({ ...q, route: planRoute(pairs, q.from, q.to)! }));
    ctx.body = {
      transcription: {
        languages: WHISPER_LANGUAGES,
        model_sizes: models.servedSizes(),
        models: models.list().map((m) => ({ name: m.name, size: m.size, english_only: m.englishOnly })),
      },
      translation: {
        engine: translator.name,
        speech_to_english: true,
        direct_pairs: pairs,
        pairs: reachable,
        pair_count: reachable.length,
        targets_from_any_speech: targetsFromAnySpeech(pairs),
      },
    } satisfies z.infer<typeof LanguagesSchema>;
  });

  return router;
}
