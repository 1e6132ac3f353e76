import { z } from 'zod';
import { parseTimeString } from '../../lib/time';
import { LanguageCode, oneSource, sourceFields, sourceRequired, TimeString, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';
import { DOWNLOAD_FORMATS, QUALITIES } from '../../lib/media-vocabulary';
import { SUBTITLE_SPEECH_MODEL, subtitlesCost } from '../../lib/download-plan';

export { DOWNLOAD_FORMATS, QUALITIES, type DownloadFormat, type Quality } from '../../lib/media-vocabulary';
export const PROCESSING_OPTIONS = ['normalize', 'trim_silence', 'denoise'] as const;
const VIDEO_FORMATS: readonly string[] = ['mp4', 'webm', 'mkv'];

export const SUBTITLE_SOURCES = ['auto', 'platform', 'speech'] as const;
export const SUBTITLE_MODES = ['embed', 'burn'] as const;
const MAX_SUBTITLE_LANGUAGES = 8;

const SubtitlesRequest = z
  .strictObject({
    languages: z
      .array(LanguageCode)
      .min(1, 'lists at least one language')
      .max(MAX_SUBTITLE_LANGUAGES, `lists at most ${MAX_SUBTITLE_LANGUAGES} languages`)
      .refine((l) => new Set(l).size === l.length, 'lists each language once')
      .meta({ description: 'ISO 639-1 codes, one track each, in this order' }),
    source: z
      .enum(SUBTITLE_SOURCES, { error: `must be one of ${SUBTITLE_SOURCES.join(', ')}` })
      .default('auto')
      .meta({ description: "platform: the source's own subtitle tracks (an HTML5 page's <track> included), free; speech: recognised from the audio (4 credits), translated for a language other than the spoken one (1 each); auto: the platform's track where there is one, else speech" }),
    mode: z
      .enum(SUBTITLE_MODES, { error: `must be one of ${SUBTITLE_MODES.join(', ')}` })
      .default('embed')
      .meta({ description: 'embed: soft tracks a player can turn on (mp4 mov_text, mkv SubRip, webm WebVTT), tagged with their language; burn: one language drawn into the picture (the video is re-encoded)' }),
  })
  .meta({ id: 'DownloadSubtitles' });

export const DownloadRequestSchema = z
  .strictObject({
    ...sourceFields,
    quality: z
      .enum(QUALITIES, { error: `must be one of ${QUALITIES.join(', ')}` })
      // names for generated clients, where "1080p" alone cannot start an identifier
      .meta({ 'x-enum-varnames': ['BEST', 'P1080', 'P720', 'P480', 'AUDIO'] })
      .default('best')
      .meta({ description: 'best (the highest the platform offers), 1080p, 720p or 480p (at most that height), or audio (the audio track alone)' }),
    format: z
      .enum(DOWNLOAD_FORMATS, { error: `must be one of ${DOWNLOAD_FORMATS.join(', ')}` })
      .nullable()
      .default(null)
      .meta({ description: 'null keeps the platform\'s container' }),
    clip_start: TimeString.nullable().default(null).meta({ description: 'Start of the clip: HH:MM:SS, MM:SS or seconds' }),
    clip_end: TimeString.nullable().default(null).meta({ description: 'End of the clip; must be after clip_start' }),
    processing: z
      .array(z.enum(PROCESSING_OPTIONS, { error: `must be one of ${PROCESSING_OPTIONS.join(', ')}` }))
      .max(3, 'lists at most the three options')
      .nullable()
      .default(null)
      // Applied as denoise → trim_silence → normalize whatever the order; duplicates dropped.
      .transform((p) => (p && p.length > 0 ? [...new Set(p)] : null))
      .meta({ description: 'Any of normalize (-16 LUFS), trim_silence (start and end only), denoise; 2 credits instead of 1' }),
    subtitles: SubtitlesRequest.nullable()
      .default(null)
      .meta({ description: 'Subtitles in the video: which languages, from where, soft or burnt in. Charged at most 4 + 1 per language, what speech was not needed for is refunded when the job completes' }),
    webhook_url: WebhookUrl,
  })
  .superRefine((p, ctx) => {
    if (p.subtitles && (p.quality === 'audio' || p.format === 'mp3' || p.format === 'wav')) {
      ctx.addIssue({ code: 'custom', path: ['subtitles'], message: 'subtitles need a video: an audio-only download (quality "audio", mp3 or wav) cannot carry them' });
    }
    if (p.subtitles?.mode === 'burn' && p.subtitles.languages.length !== 1) {
      ctx.addIssue({ code: 'custom', path: ['subtitles', 'languages'], message: 'burn draws exactly one language into the picture; list one' });
    }
    const start = p.clip_start === null ? null : parseTimeString(p.clip_start);
    const end = p.clip_end === null ? null : parseTimeString(p.clip_end);
    if (start !== null && end !== null && end <= start) ctx.addIssue({ code: 'custom', path: ['clip_end'], message: 'clip_end must be after clip_start' });
    if (p.quality === 'audio' && p.format !== null && VIDEO_FORMATS.includes(p.format)) {
      ctx.addIssue({ code: 'custom', path: ['format'], message: 'format must be mp3 or wav, or left out: quality "audio" gives an audio-only file' });
    }
  })
  .refine(...sourceRequired)
  .refine(...oneSource)
  .meta({ id: 'DownloadRequest' });

/** A download's parameters; subtitles is absent on jobs created before downloads could carry them. */
export type DownloadParams = Omit<z.output<typeof DownloadRequestSchema>, 'subtitles'> & { subtitles?: z.output<typeof SubtitlesRequest> | null };

export const DownloadResultSchema = z
  .looseObject({
    title: z.string(),
    duration: z.number().meta({ description: 'seconds, measured on the file' }),
    format: z.string().meta({ description: 'file extension of the output' }),
    filesize: z.number().int(),
    loudness: z
      .looseObject({ target_i: z.number(), input_i: z.number(), output_i: z.number().nullable(), normalization_type: z.string().nullable() })
      .optional()
      .meta({ description: 'Beyond the contract, with normalize: loudnorm\'s measurements and the output\'s' }),
    subtitles: z
      .array(z.object({ language: z.string(), source: z.enum(['platform', 'speech', 'translation']) }))
      .optional()
      .meta({ description: "With subtitles: each track in the file, in order, and where it came from (the platform's, recognised speech, or speech translated)" }),
  })
  .meta({ id: 'DownloadResult' });

export const downloadSpec: OperationSpec<'download', typeof DownloadRequestSchema> = {
  jobType: 'download',
  path: '/v1/download',
  title: 'Download',
  summary: 'Download video or audio, optionally converted, clipped or audio-processed',
  request: DownloadRequestSchema,
  result: DownloadResultSchema,
  cost: (p) => (p.processing ? 2 : 1) + subtitlesCost(p.subtitles),
  costText: '1 credit, 2 with processing; subtitles from speech: 4 more, and 1 per language translated (platform tracks are free)',
  check: (p, caps) => {
    if (!p.subtitles || p.subtitles.source === 'platform') return [];
    // speech is recognised with the multilingual base model, the language detected
    const model = caps.speech.modelProblem(SUBTITLE_SPEECH_MODEL, null);
    // with auto, a language speech cannot reach may still be the platform's: known only when the job runs
    const paths = p.subtitles.source === 'auto' ? [] : p.subtitles.languages.flatMap((l, i) => {
      const problem = caps.speech.translationProblem(null, l);
      return problem ? [{ field: `subtitles.languages.${i}`, message: problem }] : [];
    });
    return [...(model ? [{ field: 'subtitles.source', message: `speech cannot be recognised here: ${model}` }] : []), ...paths];
  },
  mcp: { tool: 'download_media', title: 'Download media' },
  output: 'media',
};
