import { z } from 'zod';
import { intIn, oneSource, sourceFields, sourceRequired, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';

export const WAVEFORM_FORMATS = ['json', 'png'] as const;
export type WaveformFormat = (typeof WAVEFORM_FORMATS)[number];

export const WAVEFORM_LIMITS = {
  points: { min: 10, max: 100_000, default: 1000 },
  width: { min: 100, max: 10_000, default: 1800 },
  height: { min: 32, max: 2000, default: 280 },
} as const;
const L = WAVEFORM_LIMITS;

/** Normalised parameters: the fields of the other format are null. */
export interface WaveformParams {
  url?: string;
  upload_id?: string;
  format: WaveformFormat;
  /** json: min/max pairs across the whole audio. */
  points: number | null;
  /** png: the image's size in pixels. */
  width: number | null;
  height: number | null;
  webhook_url: string | null;
}

const onlyFor = (format: WaveformFormat) => `applies only to format ${format}`;

export const WaveformRequestSchema = z
  .strictObject({
    ...sourceFields,
    format: z.enum(WAVEFORM_FORMATS, { error: `must be one of ${WAVEFORM_FORMATS.join(', ')}` }).default('json').meta({
      description: 'json: peak data in the audiowaveform format (version 2), as peaks.js reads it; png: the waveform drawn as an image',
    }),
    points: intIn(L.points.min, L.points.max).optional().meta({ description: `Min/max pairs across the audio, default ${L.points.default}; only with format json (422 otherwise)` }),
    width: intIn(L.width.min, L.width.max).optional().meta({ description: `Image width in pixels (one min/max pair per column), default ${L.width.default}; only with format png (422 otherwise)` }),
    height: intIn(L.height.min, L.height.max).optional().meta({ description: `Image height in pixels, default ${L.height.default}; only with format png (422 otherwise)` }),
    webhook_url: WebhookUrl,
  })
  .refine(...sourceRequired)
  .refine(...oneSource)
  .refine((p) => p.format === 'json' || p.points === undefined, { path: ['points'], message: onlyFor('json') })
  .refine((p) => p.format === 'png' || p.width === undefined, { path: ['width'], message: onlyFor('png') })
  .refine((p) => p.format === 'png' || p.height === undefined, { path: ['height'], message: onlyFor('png') })
  .transform((p): WaveformParams => ({
    ...(p.url !== undefined ? { url: p.url } : { upload_id: p.upload_id }),
    format: p.format,
    points: p.format === 'json' ? (p.points ?? L.points.default) : null,
    width: p.format === 'png' ? (p.width ?? L.width.default) : null,
    height: p.format === 'png' ? (p.height ?? L.height.default) : null,
    webhook_url: p.webhook_url,
  }))
  .meta({ id: 'WaveformRequest' });

export const WaveformResultSchema = z
  .looseObject({
    format: z.enum(WAVEFORM_FORMATS),
    duration: z.number().meta({ description: 'seconds of audio drawn, measured from the decoded samples' }),
    points: z.number().int().optional().meta({ description: 'json: min/max pairs in the file (its length)' }),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
    sample_rate: z.number().int().meta({ description: 'of the source audio' }),
    samples_per_pixel: z.number().int().meta({ description: 'samples each pair covers (the last pair also the few left over)' }),
    title: z.string(),
  })
  .meta({ id: 'WaveformResult' });

export const waveformSpec: OperationSpec<'waveform', typeof WaveformRequestSchema> = {
  jobType: 'waveform',
  path: '/v1/waveform',
  title: 'Waveform',
  summary: 'The audio waveform: peak data in the audiowaveform JSON format (for peaks.js) or a PNG image',
  request: WaveformRequestSchema,
  result: WaveformResultSchema,
  cost: () => 1,
  costText: '1 credit',
  mcp: { tool: 'get_waveform', title: 'Get an audio waveform' },
  output: 'media',
  outputTypes: { png: 'image/png' },
};
