import { z } from 'zod';
import { LanguageCode, oneSource, sourceFields, sourceRequired, WebhookUrl } from '../fields';
import type { ExtraSource, OperationSpec } from '../define';
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

/** Known speakers: at most this many reference clips, each this many seconds long. */
export const MAX_KNOWN_SPEAKERS = 4;
export const REFERENCE_SECONDS = [2, 10] as const;

/** Speaker labels, shared with translate: `diarize` and the number of voices when the caller knows it. */
export const speakerFields = {
  diarize: z
    .boolean({ error: 'must be true or false' })
    .default(false)
    .meta({ description: 'Label who spoke: `speaker` on every segment and word (A, B… in order of first speech), `speakers` with each one\'s seconds; a segment in which the speaker changes is split there. 1 credit more' }),
  num_speakers: z
    .number({ error: 'must be a whole number from 1 to 10' })
    .int('must be a whole number from 1 to 10')
    .min(1, 'must be a whole number from 1 to 10')
    .max(10, 'must be a whole number from 1 to 10')
    .nullable()
    .default(null)
    .meta({ description: 'How many people speak, when known (with diarize); null estimates it from the voices' }),
  known_speakers: z
    .array(
      z
        .strictObject({
          name: z
            .string({ error: 'must be a name of 1 to 40 characters' })
            .trim()
            .min(1, 'must be a name of 1 to 40 characters')
            .max(40, 'must be a name of 1 to 40 characters')
            .regex(/^[^\u0000-\u001f\u007f<>&]+$/, 'must not hold control characters, <, > or &')
            .meta({ description: 'The label for this voice, in place of a letter' }),
          ...sourceFields,
        })
        .refine(...sourceRequired)
        .refine(...oneSource),
      { error: 'must be a list of {name, url | upload_id}' },
    )
    .max(MAX_KNOWN_SPEAKERS, `must hold at most ${MAX_KNOWN_SPEAKERS} speakers`)
    .default([])
    .meta({ description: `Up to ${MAX_KNOWN_SPEAKERS} voices to name: each a reference clip of ${REFERENCE_SECONDS[0]}–${REFERENCE_SECONDS[1]} s of one person speaking (url or upload_id). A speaker whose voice matches one is labelled with its name; others keep letters. Implies diarize` }),
  multichannel: z
    .boolean({ error: 'must be true or false' })
    .default(false)
    .meta({ description: 'One speaker per audio channel (a call recording: agent left, customer right): each channel recognised on its own, its segments labelled with the channel\'s letter (A for the first) and `channel` (0-based), merged in time order. 1 credit more' }),
};

/** Speaker labels were asked for, one way or another (each costs the same credit). */
export function labelsSpeakers(p: SpeakerParams): boolean {
  return p.diarize === true || p.multichannel === true || (p.known_speakers?.length ?? 0) > 0;
}

/** Voices are told apart in mixed audio: asked for with diarize, or implied by known speakers. */
export function diarizes(p: SpeakerParams): boolean {
  return p.diarize === true || (p.known_speakers?.length ?? 0) > 0;
}

/** The reference clips a job fetches besides its source, each named by its field. */
export function knownSpeakerSources(p: SpeakerParams): ExtraSource[] {
  return (p.known_speakers ?? []).map((k, i) => ({ field: `known_speakers.${i}`, url: k.url, upload_id: k.upload_id, seconds: REFERENCE_SECONDS }));
}

type SpeakerParams = { diarize?: boolean; num_speakers?: number | null; multichannel?: boolean; known_speakers?: { name: string; url?: string; upload_id?: string }[] };

/** `.refine(...speakersNeedDiarize)`: num_speakers says how to label speakers, so it comes with diarize. */
export const speakersNeedDiarize: [(p: SpeakerParams) => boolean, { path: string[]; message: string }] = [
  (p) => p.num_speakers === null || p.num_speakers === undefined || diarizes(p),
  { path: ['num_speakers'], message: 'labels speakers, so it needs diarize: true' },
];

/** `.refine(...oneWayOfSpeakers)`: channels are the speakers, or voices are; not both. */
export const oneWayOfSpeakers: [(p: SpeakerParams) => boolean, { path: string[]; message: string }] = [
  (p) => !(p.multichannel === true && diarizes(p)),
  { path: ['multichannel'], message: 'labels one speaker per channel, and diarize (or known_speakers) tells voices apart in mixed audio: give one of them' },
];

/** `.refine(...distinctSpeakerNames)`: a name labels one voice. */
export const distinctSpeakerNames: [(p: SpeakerParams) => boolean, { path: string[]; message: string }] = [
  (p) => new Set((p.known_speakers ?? []).map((k) => k.name.toLowerCase())).size === (p.known_speakers ?? []).length,
  { path: ['known_speakers'], message: 'names each voice once: two speakers have the same name' },
];

/** Speaker labels cost a credit on top of the recognition. */
export const SPEAKER_LABELS_COST = 1;

export const TranscribeRequestSchema = z
  .strictObject({
    ...sourceFields,
    language: LanguageCode.nullable().default(null).meta({ description: 'ISO 639-1; null detects it from the first 30 s of speech' }),
    output_format: OutputFormat,
    word_timestamps: z.boolean({ error: 'must be true or false' }).default(true).meta({ description: 'Word-level timestamps; JSON output only' }),
    model_size: ModelSizeField,
    ...speakerFields,
    webhook_url: WebhookUrl,
  })
  .refine(...sourceRequired)
  .refine(...oneSource)
  .refine(...speakersNeedDiarize)
  .refine(...oneWayOfSpeakers)
  .refine(...distinctSpeakerNames)
  .meta({ id: 'TranscribeRequest' });

export type TranscribeParams = z.output<typeof TranscribeRequestSchema>;

export const TranscribeResultSchema = z
  .looseObject({
    language: z.string(),
    text: z.string(),
    duration: z.number(),
    segment_count: z.number().int(),
    output_format: z.enum(SPEECH_OUTPUT_FORMATS),
    speaker_count: z.number().int().optional().meta({ description: 'With diarize: how many speakers were labelled' }),
  })
  .meta({ id: 'TranscribeResult' });

export const transcribeSpec: OperationSpec<'transcribe', typeof TranscribeRequestSchema> = {
  jobType: 'transcribe',
  path: '/v1/transcribe',
  title: 'Transcribe',
  summary: 'Transcribe speech to text: JSON with timestamps, SRT or VTT',
  request: TranscribeRequestSchema,
  result: TranscribeResultSchema,
  cost: (p) => 4 + (labelsSpeakers(p) ? SPEAKER_LABELS_COST : 0),
  costText: '4 credits, 5 with speaker labels (diarize, known_speakers or multichannel)',
  extraSources: knownSpeakerSources,
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
