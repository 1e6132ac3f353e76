import { z } from 'zod';
import { LanguageCode, oneSource, sourceFields, sourceRequired, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';
import { MODEL_SIZES } from '../../lib/media-vocabulary';

export { MODEL_SIZES, type ModelSize } from '../../lib/media-vocabulary';
export const SPEECH_OUTPUT_FORMATS = ['json', 'srt', 'vtt'] as const;
export type SpeechOutputFormat = (typeof SPEECH_OUTPUT_FORMATS)[number];

export const OutputFormat = z
  .enum(SPEECH_OUTPUT_FORMATS, { error: 'must be json, srt or vtt' })
  .default('json')
  .meta({ description: 'The output file: json (text and timed segments), srt or vtt (subtitles)' });
export const ModelSizeField = z
  .enum(MODEL_SIZES, { error: `must be one of ${MODEL_SIZES.join(', ')}` })
  .default('base')
  .meta({ description: 'A size with no model installed on this server gets 422 (GET /v1/languages lists the installed ones)' });

export const TranscribeRequestSchema = z
  .strictObject({
    ...sourceFields,
    language: LanguageCode.nullable().default(null).meta({ description: 'ISO 639-1; null detects it from the first 30 s of speech' }),
    output_format: OutputFormat,
    word_timestamps: z.boolean({ error: 'must be true or false' }).default(true).meta({ description: 'Word-level timestamps; JSON output only' }),
    model_size: ModelSizeField,
    webhook_url: WebhookUrl,
  })
  .refine(...sourceRequired)
  .refine(...oneSource)
  .meta({ id: 'TranscribeRequest' });

export type TranscribeParams = z.output<typeof TranscribeRequestSchema>;

export const TranscribeResultSchema = z
  .looseObject({
    language: z.string(),
    text: z.string(),
    duration: z.number(),
    segment_count: z.number().int(),
    output_format: z.enum(SPEECH_OUTPUT_FORMATS),
  })
  .meta({ id: 'TranscribeResult' });

export const transcribeSpec: OperationSpec<'transcribe', typeof TranscribeRequestSchema> = {
  jobType: 'transcribe',
  path: '/v1/transcribe',
  title: 'Transcribe',
  summary: 'Transcribe speech to text: JSON with timestamps, SRT or VTT',
  request: TranscribeRequestSchema,
  result: TranscribeResultSchema,
  cost: () => 4,
  costText: '4 credits',
  mcp: { tool: 'transcribe', title: 'Transcribe speech' },
  output: 'text',
  check: (p, caps) => {
    const problems = [];
    const lang = p.language === null ? null : caps.speech.spokenLanguageProblem(p.language);
    if (lang) problems.push({ field: 'language', message: `language ${lang}` });
    const model = caps.speech.modelProblem(p.model_size, p.language);
    if (model) problems.push({ field: 'model_size', message: model });
    return problems;
  },
};
