import { z } from 'zod';
import { parseTimeString } from '../../lib/time';
import { oneSource, sourceFields, sourceRequired, TimeString, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';
import { DOWNLOAD_FORMATS, QUALITIES } from '../../lib/media-vocabulary';

export { DOWNLOAD_FORMATS, QUALITIES, type DownloadFormat, type Quality } from '../../lib/media-vocabulary';
export const PROCESSING_OPTIONS = ['normalize', 'trim_silence', 'denoise'] as const;
const VIDEO_FORMATS: readonly string[] = ['mp4', 'webm', 'mkv'];

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
    webhook_url: WebhookUrl,
  })
  .superRefine((p, ctx) => {
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

export type DownloadParams = z.output<typeof DownloadRequestSchema>;

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
  })
  .meta({ id: 'DownloadResult' });

export const downloadSpec: OperationSpec<'download', typeof DownloadRequestSchema> = {
  jobType: 'download',
  path: '/v1/download',
  title: 'Download',
  summary: 'Download video or audio, optionally converted, clipped or audio-processed',
  request: DownloadRequestSchema,
  result: DownloadResultSchema,
  cost: (p) => (p.processing ? 2 : 1),
  costText: '1 credit, 2 with processing',
  mcp: { tool: 'download_media', title: 'Download media' },
  output: 'media',
};
