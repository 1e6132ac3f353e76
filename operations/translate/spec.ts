import { z } from 'zod';
import { LanguageCode, oneSource, sourceFields, sourceRequired, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';
import { distinctSpeakerNames, knownSpeakerSources, labelsSpeakers, ModelSizeField, oneWayOfSpeakers, OutputFormat, SPEAKER_LABELS_COST, SPEECH_OUTPUT_FORMATS, speakerFields, speakersNeedDiarize } from '../transcribe/spec';

export const TranslateRequestSchema = z
  .strictObject({
    ...sourceFields,
    target_language: LanguageCode.meta({ description: 'ISO 639-1 code of the translation' }),
    source_language: LanguageCode.nullable().default(null).meta({ description: 'ISO 639-1; null detects it' }),
    output_format: OutputFormat,
    model_size: ModelSizeField,
    ...speakerFields,
    webhook_url: WebhookUrl,
  })
  .refine(...sourceRequired)
  .refine(...oneSource)
  .refine(...speakersNeedDiarize)
  .refine(...oneWayOfSpeakers)
  .refine(...distinctSpeakerNames)
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
    speaker_count: z.number().int().optional().meta({ description: 'With diarize: how many speakers were labelled' }),
  })
  .meta({ id: 'TranslateResult' });

export const translateSpec: OperationSpec<'translate', typeof TranslateRequestSchema> = {
  jobType: 'translate',
  path: '/v1/translate',
  title: 'Translate',
  summary: 'Transcribe speech and translate it into another language (Whisper and Apertium, on this server)',
  request: TranslateRequestSchema,
  result: TranslateResultSchema,
  cost: (p) => 5 + (labelsSpeakers(p) ? SPEAKER_LABELS_COST : 0),
  costText: '5 credits, 6 with speaker labels (diarize, known_speakers or multichannel)',
  extraSources: knownSpeakerSources,
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
