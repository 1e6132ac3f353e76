import { z } from 'zod';
import { intIn, oneSource, sourceFields, sourceRequired, TimeString, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';

export const PREVIEW_TYPES = ['gif', 'thumbnail', 'mosaic', 'clip'] as const;
const PREVIEW_TYPE_HELP = 'Which preview: gif (an animated GIF of a stretch), thumbnail (one frame as a JPEG), mosaic (a grid of frames across the video as one image) or clip (a short MP4 excerpt)';
export type PreviewType = (typeof PREVIEW_TYPES)[number];

export const PREVIEW_LIMITS = {
  width: { min: 16, max: 1920, default: 480 },
  gif: { duration: { default: 5, max: 15 }, fps: { default: 10, max: 20 } },
  clip: { duration: { default: 10, max: 30 } },
  mosaic: { columns: { default: 4, max: 8 }, rows: { default: 4, max: 8 } },
} as const;
const L = PREVIEW_LIMITS;

const seconds = (max: number) =>
  z.number({ error: `must be a number of seconds, more than 0 and at most ${max}` }).positive('must be more than 0').max(max, `must be at most ${max}`);
const Width = intIn(L.width.min, L.width.max)
  .default(L.width.default)
  .meta({ description: 'Output width in pixels (mosaic: the whole sheet); the height follows the aspect ratio' });
/** A known preview field that does not apply to this type: accepted and ignored (echoed as null). */
const ignored = (forTypes: string) => z.unknown().optional().meta({ description: `Ignored here; applies to ${forTypes}` });

const common = { ...sourceFields, webhook_url: WebhookUrl };

const GifRequest = z
  .strictObject({
    ...common,
    preview_type: z.literal('gif').meta({ description: PREVIEW_TYPE_HELP }),
    start: TimeString.nullable().default(null).meta({ description: 'Start time; default 0' }),
    duration: seconds(L.gif.duration.max).default(L.gif.duration.default).meta({ description: `Seconds, default ${L.gif.duration.default}, at most ${L.gif.duration.max}` }),
    width: Width,
    fps: intIn(1, L.gif.fps.max).default(L.gif.fps.default).meta({ description: `Frames per second, default ${L.gif.fps.default}` }),
    timestamp: ignored('thumbnail'),
    columns: ignored('mosaic'),
    rows: ignored('mosaic'),
  })
  .meta({ id: 'GifPreviewRequest' });

const ThumbnailRequest = z
  .strictObject({
    ...common,
    preview_type: z.literal('thumbnail').meta({ description: PREVIEW_TYPE_HELP }),
    timestamp: TimeString.nullable().default(null).meta({ description: 'Frame time; default 25% of the duration' }),
    width: Width,
    start: ignored('gif and clip'),
    duration: ignored('gif and clip'),
    fps: ignored('gif'),
    columns: ignored('mosaic'),
    rows: ignored('mosaic'),
  })
  .meta({ id: 'ThumbnailPreviewRequest' });

const MosaicRequest = z
  .strictObject({
    ...common,
    preview_type: z.literal('mosaic').meta({ description: PREVIEW_TYPE_HELP }),
    columns: intIn(1, L.mosaic.columns.max).default(L.mosaic.columns.default),
    rows: intIn(1, L.mosaic.rows.max).default(L.mosaic.rows.default),
    width: Width,
    timestamp: ignored('thumbnail'),
    start: ignored('gif and clip'),
    duration: ignored('gif and clip'),
    fps: ignored('gif'),
  })
  .meta({ id: 'MosaicPreviewRequest' });

const ClipRequest = z
  .strictObject({
    ...common,
    preview_type: z.literal('clip').meta({ description: PREVIEW_TYPE_HELP }),
    start: TimeString.nullable().default(null).meta({ description: 'Start time; default 0' }),
    duration: seconds(L.clip.duration.max).default(L.clip.duration.default).meta({ description: `Seconds, default ${L.clip.duration.default}, at most ${L.clip.duration.max}` }),
    width: Width,
    timestamp: ignored('thumbnail'),
    fps: ignored('gif'),
    columns: ignored('mosaic'),
    rows: ignored('mosaic'),
  })
  .meta({ id: 'ClipPreviewRequest' });

/** Preview request, normalised: parameters that do not apply to preview_type are null. */
export interface PreviewParams {
  url?: string;
  upload_id?: string;
  preview_type: PreviewType;
  /** thumbnail: frame time (null = 25% of the duration). */
  timestamp: string | null;
  /** gif, clip: start time (null = the start). */
  start: string | null;
  /** gif (≤ 15 s), clip (≤ 30 s): seconds. */
  duration: number | null;
  /** Output width in pixels (mosaic: the whole sheet); the height follows the aspect ratio. */
  width: number;
  columns: number | null;
  rows: number | null;
  /** gif frames per second. */
  fps: number | null;
  webhook_url: string | null;
}

export const PreviewRequestSchema = z
  .discriminatedUnion('preview_type', [GifRequest, ThumbnailRequest, MosaicRequest, ClipRequest], { error: `must be one of ${PREVIEW_TYPES.join(', ')}` })
  .refine(...sourceRequired)
  .refine(...oneSource)
  .transform((p): PreviewParams => {
    const none = { timestamp: null, start: null, duration: null, columns: null, rows: null, fps: null };
    const base = { ...(p.url !== undefined ? { url: p.url } : { upload_id: p.upload_id }), webhook_url: p.webhook_url, width: p.width };
    switch (p.preview_type) {
      case 'gif':
        return { ...none, ...base, preview_type: 'gif', start: p.start, duration: p.duration, fps: p.fps };
      case 'thumbnail':
        return { ...none, ...base, preview_type: 'thumbnail', timestamp: p.timestamp };
      case 'mosaic':
        return { ...none, ...base, preview_type: 'mosaic', columns: p.columns, rows: p.rows };
      case 'clip':
        return { ...none, ...base, preview_type: 'clip', start: p.start, duration: p.duration };
    }
  })
  .meta({ id: 'PreviewRequest' });

export const PreviewResultSchema = z
  .looseObject({
    preview_type: z.enum(PREVIEW_TYPES),
    width: z.number().int(),
    height: z.number().int(),
    duration: z.number().meta({ description: 'seconds; 0 for stills' }),
    fps: z.number().int().meta({ description: 'frames ÷ duration, measured; 0 for stills' }),
    filesize: z.number().int(),
  })
  .meta({ id: 'PreviewResult' });

export const previewSpec: OperationSpec<'preview', typeof PreviewRequestSchema> = {
  jobType: 'preview',
  path: '/v1/preview',
  title: 'Preview',
  summary: 'GIF, JPEG thumbnail, mosaic (contact sheet) or short MP4 clip of a video',
  request: PreviewRequestSchema,
  result: PreviewResultSchema,
  cost: () => 1,
  costText: '1 credit',
  mcp: { tool: 'create_preview', title: 'Create a preview' },
  output: 'media',
};
