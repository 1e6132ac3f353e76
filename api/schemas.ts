import { z } from 'zod';
import { JOB_STATUSES, JOB_TYPES } from '../db/job.entity';
import { parseTimeString } from '../lib/time';
import './openapi';

/** `HH:MM:SS`, `MM:SS` or seconds, as string or number; kept in the caller's spelling. */
export const TimeString = z
  .union([z.string(), z.number()])
  .refine((v) => parseTimeString(v) !== null, { message: 'must be HH:MM:SS, MM:SS or a number of seconds' })
  .transform((v) => String(v))
  .openapi({ type: 'string', example: '01:30' });

export const JobCreatedSchema = z
  .object({
    job_id: z.string().uuid(),
    status: z.literal('pending'),
    credits_charged: z.number().int(),
    job_type: z.enum(JOB_TYPES),
    created_at: z.string(),
  })
  .openapi('JobCreated');

export const JobSchema = z
  .object({
    job_id: z.string().uuid(),
    job_type: z.enum(JOB_TYPES),
    status: z.enum(JOB_STATUSES),
    source_url: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    credits_charged: z.number().int(),
    progress: z.number().int().min(0).max(100).nullable().openapi({ description: 'Beyond the contract: 0–100 while running' }),
    download_url: z.string().nullable(),
    result_data: z.record(z.string(), z.unknown()).nullable(),
    error_message: z.string().nullable(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
    expires_at: z.string().nullable(),
  })
  .openapi('Job');

export const JobListSchema = z
  .object({ items: z.array(JobSchema), next_cursor: z.string().nullable(), has_more: z.boolean() })
  .openapi('JobList');

const FormatInfoSchema = z
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
  .openapi('FormatInfo');

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
    formats: z.array(FormatInfoSchema),
  })
  .openapi('VideoInfo');

export const DownloadRequestSchema = z
  .object({
    url: z.string({ error: 'is required' }).min(1, 'is required'),
    quality: z.enum(['best', '1080p', '720p', '480p', 'audio']).default('best'),
    format: z.enum(['mp4', 'webm', 'mkv', 'mp3', 'wav']).nullable().default(null),
    clip_start: TimeString.nullable().default(null),
    clip_end: TimeString.nullable().default(null),
    processing: z.array(z.enum(['normalize', 'trim_silence', 'denoise'])).nullable().default(null),
    webhook_url: z.string().nullable().default(null),
  })
  .openapi('DownloadRequest');

export const ListJobsQuerySchema = z.object({
  cursor: z.string().optional(),
  limit: z.coerce.number({ error: 'must be an integer from 1 to 100' }).int('must be an integer from 1 to 100').min(1, 'must be at least 1').max(100, 'must be at most 100').default(20),
  status: z.enum(JOB_STATUSES).optional(),
  job_type: z.enum(JOB_TYPES).optional(),
});

export const IdempotencyHeaderSchema = z.object({
  'Idempotency-Key': z
    .string()
    .max(255)
    .optional()
    .openapi({ description: 'Beyond the contract: a retry with the same key and body replays the first response instead of creating a second job; another body gets 409' }),
});
