// The Video info object of `GET /v1/info` (docs/api.md), as a schema and its type.
import { z } from 'zod';

export const FormatInfoSchema = z
  .object({
    format_id: z.string(),
    ext: z.string(),
    quality: z.string().nullable(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    fps: z.number().nullable(),
    filesize: z.number().int().nullable(),
    vcodec: z.string().nullable(),
    acodec: z.string().nullable(),
    audio_only: z.boolean(),
  })
  .meta({ id: 'FormatInfo' });

export const VideoInfoSchema = z
  .object({
    url: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    duration: z.number().nullable(),
    thumbnail: z.string().nullable(),
    upload_date: z.string().nullable(),
    view_count: z.number().int().nullable(),
    like_count: z.number().int().nullable(),
    channel: z.string().nullable(),
    channel_url: z.string().nullable(),
    tags: z.array(z.string()),
    categories: z.array(z.string()),
    subtitles: z.array(z.string()),
    chapters: z
      .array(z.object({ title: z.string(), start_time: z.number().meta({ description: 'seconds' }), end_time: z.number().meta({ description: 'seconds' }) }).meta({ id: 'Chapter' }))
      .meta({ description: "Beyond the contract: the video's chapters, from the platform's metadata or the file's container; empty when it has none" }),
    formats: z.array(FormatInfoSchema),
  })
  .meta({ id: 'VideoInfo' });

export type FormatInfo = z.infer<typeof FormatInfoSchema>;
export type VideoInfo = z.infer<typeof VideoInfoSchema>;
