import { z } from 'zod';
import { intIn, oneSource, sourceFields, sourceRequired, TimeString, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';

export const PREVIEW_TYPES = ['gif', 'thumbnail', 'mosaic', 'clip', 'storyboard'] as const;
const PREVIEW_TYPE_HELP =
  'Which preview: gif (an animated GIF of a stretch), thumbnail (one frame as a JPEG), mosaic (a grid of frames across the video as one image), clip (a short MP4 excerpt) or storyboard (the scrubbing thumbnails players show: a JPEG sprite, a WebVTT of #xywh= regions and the same as JSON)';
export type PreviewType = (typeof PREVIEW_TYPES)[number];

export const PREVIEW_LIMITS = {
  width: { min: 16, max: 1920, default: 480 },
  gif: { duration: { default: 5, max: 15 }, fps: { default: 10, max: 20 } },
  clip: { duration: { default: 10, max: 30 } },
  mosaic: { columns: { default: 4, max: 8 }, rows: { default: 4, max: 8 } },
  storyboard: { width: { min: 32, max: 640, default: 160 }, columns: { default: 10, max: 20 }, interval: { max: 600 }, tiles: { max: 1000 } },
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
    interval: ignored('storyboard'),
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
    interval: ignored('storyboard'),
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
    interval: ignored('storyboard'),
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
    interval: ignored('storyboard'),
  })
  .meta({ id: 'ClipPreviewRequest' });

const StoryboardRequest = z
  .strictObject({
    ...common,
    preview_type: z.literal('storyboard').meta({ description: PREVIEW_TYPE_HELP }),
    interval: seconds(L.storyboard.interval.max)
      .nullable()
      .default(null)
      .meta({ description: `Seconds between tiles; default from the duration, so that a long video has about 150 tiles (1 s up to 150 s, then duration ÷ 150). At most ${L.storyboard.tiles.max} tiles` }),
    width: intIn(L.storyboard.width.min, L.storyboard.width.max)
      .default(L.storyboard.width.default)
      .meta({ description: `Width of one tile in pixels, default ${L.storyboard.width.default}; the height follows the aspect ratio` }),
    columns: intIn(1, L.storyboard.columns.max).default(L.storyboard.columns.default).meta({ description: `Tiles per row of the sprite, default ${L.storyboard.columns.default}` }),
    timestamp: ignored('thumbnail'),
    start: ignored('gif and clip'),
    duration: ignored('gif and clip'),
    fps: ignored('gif'),
    rows: ignored('mosaic (a storyboard has as many rows as its tiles need)'),
  })
  .meta({ id: 'StoryboardPreviewRequest' });

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
  /** Output width in pixels (mosaic: the whole sheet; storyboard: one tile); the height follows the aspect ratio. */
  width: number;
  /** mosaic, storyboard: tiles per row. */
  columns: number | null;
  /** storyboard: seconds between tiles (null = chosen from the duration). */
  interval?: number | null;
  rows: number | null;
  /** gif frames per second. */
  fps: number | null;
  webhook_url: string | null;
}

export const PreviewRequestSchema = z
  .discriminatedUnion('preview_type', [GifRequest, ThumbnailRequest, MosaicRequest, ClipRequest, StoryboardRequest], { error: `must be one of ${PREVIEW_TYPES.join(', ')}` })
  .refine(...sourceRequired)
  .refine(...oneSource)
  .transform((p): PreviewParams => {
    const none = { timestamp: null, start: null, duration: null, columns: null, rows: null, fps: null, interval: null };
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
      case 'storyboard':
        return { ...none, ...base, preview_type: 'storyboard', columns: p.columns, interval: p.interval };
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
    tiles: z.number().int().optional().meta({ description: 'storyboard: how many tiles (cues); width and height are one tile\'s, duration the source\'s, filesize the sprite\'s' }),
    interval: z.number().optional().meta({ description: 'storyboard: seconds between tiles' }),
    columns: z.number().int().optional().meta({ description: 'storyboard: tiles per row of the sprite' }),
    rows: z.number().int().optional().meta({ description: 'storyboard: rows of the sprite' }),
    sprite: z.string().optional().meta({ description: "storyboard: the sprite's file name in the job's files (the WebVTT, first, is what download_url serves; storyboard.json is Mux's storyboard JSON)" }),
    frames_from: z.enum(['every_frame', 'keyframes']).optional().meta({ description: 'storyboard: whether tiles were taken from a decode of every frame, or (long sources) of keyframes only, the nearest one at or before each tile' }),
  })
  .meta({ id: 'PreviewResult' });

export const previewSpec: OperationSpec<'preview', typeof PreviewRequestSchema> = {
  jobType: 'preview',
  path: '/v1/preview',
  title: 'Preview',
  summary: 'GIF, JPEG thumbnail, mosaic (contact sheet), short MP4 clip or storyboard (scrubbing thumbnails: sprite, WebVTT, JSON) of a video',
  request: PreviewRequestSchema,
  result: PreviewResultSchema,
  cost: () => 1,
  costText: '1 credit',
  mcp: { tool: 'create_preview', title: 'Create a preview' },
  output: 'media',
};
