import { z } from 'zod';
import { LanguageCode, oneSource, sourceFields, sourceRequired, WebhookUrl } from '../fields';
import type { OperationSpec, ServerCapabilities } from '../define';
import type { FieldError } from '../../lib/errors';
import { isSubtitleFileName } from '../../engines/speech/subtitles';
import { distinctSpeakerNames, knownSpeakerSources, labelsSpeakers, ModelSizeField, oneWayOfSpeakers, OutputFormat, SPEAKER_LABELS_COST, SPEECH_OUTPUT_FORMATS, speakerFields, speakersNeedDiarize } from '../transcribe/spec';

export const SOURCE_TYPES = ['auto', 'media', 'subtitles'] as const;

/** What translating a subtitle file costs: no speech is recognised. */
export const SUBTITLE_TRANSLATION_COST = 1;

export const TranslateRequestSchema = z
  .strictObject({
    ...sourceFields,
    target_language: LanguageCode.meta({ description: 'ISO 639-1 code of the translation' }),
    source_language: LanguageCode.nullable().default(null).meta({ description: 'ISO 639-1; null detects it (from speech: a subtitle file needs it given)' }),
    source_type: z
      .enum(SOURCE_TYPES, { error: `must be one of ${SOURCE_TYPES.join(', ')}` })
      .default('auto')
      .meta({
        description:
          'What the source is: media (speech is recognised, then translated) or subtitles (an SRT or WebVTT file whose cues are translated, every timing kept: 1 credit). auto (the default): subtitles when the URL\'s path or the upload\'s name ends in .srt or .vtt, or the upload is text/vtt or application/x-subrip; parameters echo what was decided',
      }),
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

/** A translate job's parameters; source_type is absent on jobs created before subtitle files could be translated (media). */
export type TranslateParams = Omit<z.output<typeof TranslateRequestSchema>, 'source_type'> & { source_type?: (typeof SOURCE_TYPES)[number] };

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
  cost: (p) => (p.source_type === 'subtitles' ? SUBTITLE_TRANSLATION_COST : 5 + (labelsSpeakers(p) ? SPEAKER_LABELS_COST : 0)),
  costText: '5 credits, 6 with speaker labels (diarize, known_speakers or multichannel); 1 for a subtitle file (SRT or WebVTT)',
  withSource: (p, source) => (p.source_type !== 'auto' ? p : { ...p, source_type: isSubtitleFileName(source.name) || SUBTITLE_TYPES.has(source.contentType ?? '') ? 'subtitles' : 'media' }),
  extraSources: knownSpeakerSources,
  mcp: { tool: 'translate', title: 'Translate speech' },
  output: 'text',
  check: (p, caps) => {
    if (p.source_type === 'subtitles') return subtitleSourceProblems(p, caps);
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

const SUBTITLE_TYPES = new Set(['text/vtt', 'application/x-subrip', 'text/srt', 'application/srt']);

/** A subtitle file is translated from the language it is in, which has no speech to detect it from; nothing about speakers or models applies. */
function subtitleSourceProblems(p: TranslateParams, caps: ServerCapabilities): FieldError[] {
  if (p.source_language === null) return [{ field: 'source_language', message: 'source_language is needed to translate a subtitle file: there is no speech to detect the language from' }];
  const problems: FieldError[] = [];
  if (p.diarize || p.multichannel || p.known_speakers.length || p.num_speakers !== null) problems.push({ field: 'diarize', message: 'speaker labels need speech: a subtitle file has none (its WebVTT voices are kept as they are)' });
  const path = caps.speech.textTranslationProblem(p.source_language, p.target_language);
  if (path) problems.push({ field: 'target_language', message: path });
  return problems;
}
