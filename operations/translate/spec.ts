import { z } from 'zod';
import { LanguageCode, oneSource, sourceFields, sourceRequired, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';
import { ModelSizeField, OutputFormat, SPEECH_OUTPUT_FORMATS } from '../transcribe/spec';

export const TranslateRequestSchema = z
  .strictObject({
    ...sourceFields,
    target_language: LanguageCode.meta({ description: 'ISO 639-1 code of the translation' }),
    source_language: LanguageCode.nullable().default(null).meta({ description: 'ISO 639-1; null detects it' }),
    output_format: OutputFormat,
    model_size: ModelSizeField,
    webhook_url: WebhookUrl,
  })
  .refine(...sourceRequired)
  .refine(...oneSource)
  .meta({ id: 'TranslateRequest' });

export type TranslateParams = z.output<typeof TranslateRequestSchema>;

export const TranslateResultSchema = z
  .looseObject({
    source_language: z.string(),
    target_language: z.string(),
    original_text: z.string(),
    translated_text: z.string(),
    segment_count: z.number().int(),
    output_format: z.enum(SPEECH_OUTPUT_FORMATS),
  })
  .meta({ id: 'TranslateResult' });

export const translateSpec: OperationSpec<'translate', typeof TranslateRequestSchema> = {
  jobType: 'translate',
  path: '/v1/translate',
  title: 'Translate',
  summary: 'Transcribe speech and translate it into another language (Whisper and Apertium, on this server)',
  request: TranslateRequestSchema,
  result: TranslateResultSchema,
  cost: () => 5,
  costText: '5 credits',
  mcp: { tool: 'translate', title: 'Translate speech' },
  output: 'text',
  check: (p, caps) => {
    const problems = [];
    const lang = p.source_language === null ? null : caps.speech.spokenLanguageProblem(p.source_language);
    if (lang) problems.push({ field: 'source_language', message: `source_language ${lang}` });
    const path = lang ? null : caps.speech.translationProblem(p.source_language, p.target_language);
    if (path) problems.push({ field: 'target_language', message: path });
    const model = caps.speech.modelProblem(p.model_size, p.source_language);
    if (model) problems.push({ field: 'model_size', message: model });
    return problems;
  },
};
