// Response schemas of the REST API (request schemas live with each operation, operations/<name>/spec.ts).
import { z } from 'zod';
import { JOB_STATUSES } from '../jobs/types';
import { JOB_TYPES } from '../operations/registry';
import { STORED_FAILURE_KINDS } from '../lib/job-failure';
import { PLAN_NAMES } from '../lib/plans';
import { OPERATIONS } from '../operations/registry';

/** An instant as ISO 8601 UTC with milliseconds, e.g. 2026-11-25T05:01:00.000Z. */
export const Timestamp = z.iso.datetime();

export const JobCreatedSchema = z
  .object({
    job_id: z.uuid(),
    status: z.literal('pending'),
    credits_charged: z.number().int(),
    job_type: z.enum(JOB_TYPES),
    created_at: Timestamp,
  })
  .meta({ id: 'JobCreated' });

const ResultDataSchema = z.union(Object.values(OPERATIONS).map((op) => op.result) as [z.ZodType, z.ZodType, ...z.ZodType[]]);

export const JobSchema = z
  .object({
    job_id: z.uuid(),
    job_type: z.enum(JOB_TYPES),
    status: z.enum(JOB_STATUSES),
    source_url: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    credits_charged: z.number().int(),
    progress: z.number().int().min(0).max(100).nullable().meta({ description: 'Beyond the contract: 0–100 while running' }),
    download_url: z.string().nullable(),
    files: z
      .array(
        z
          .object({
            name: z.string().meta({ description: 'The file name, e.g. storyboard.jpg' }),
            content_type: z.string(),
            size: z.number().int().nullable().meta({ description: 'Bytes; null on jobs completed before sizes were recorded' }),
            url: z.string().meta({ description: 'Signed link, like download_url and with its expiry; the first file\'s is download_url' }),
          })
          .meta({ id: 'JobFile' }),
      )
      .meta({ description: 'Every output file of a completed job, the one download_url serves first (a storyboard: its WebVTT, sprite and JSON; a download: the video and its subtitle files); empty until it completes and once its files have expired' }),
    result_data: ResultDataSchema.nullable(),
    error_message: z.string().nullable(),
    failure_kind: z
      .enum(STORED_FAILURE_KINDS)
      .nullable()
      .meta({
        description:
          "Beyond the contract: why a failed job failed, for programs (error_message is for people). The request's: unsupported, unavailable, rejected; a tool that kept failing: tool; the service's: dependency, internal, timeout; cancelled. Null unless failed, and on jobs that failed before it was recorded",
      }),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
    expires_at: Timestamp.nullable(),
    batch_id: z.uuid().nullable().meta({ description: 'Beyond the contract: the batch this job is an item of (POST /v1/batches), else null' }),
  })
  .meta({ id: 'Job' });

export const JobListSchema = z.object({ items: z.array(JobSchema), next_cursor: z.string().nullable(), has_more: z.boolean() }).meta({ id: 'JobList' });

export const PageQuerySchema = z.strictObject({
  cursor: z.string().optional().meta({ description: 'next_cursor of the previous page, unchanged' }),
  limit: z.coerce
    .number({ error: 'must be an integer from 1 to 100' })
    .int('must be an integer from 1 to 100')
    .min(1, 'must be at least 1')
    .max(100, 'must be at most 100')
    .default(20)
    .meta({ description: 'Items per page, 1 to 100 (default 20)' }),
});

export const ListJobsQuerySchema = PageQuerySchema.extend({
  status: z.enum(JOB_STATUSES, { error: `must be one of ${JOB_STATUSES.join(', ')}` }).optional().meta({ description: 'Only jobs in this status' }),
  job_type: z.enum(JOB_TYPES, { error: `must be one of ${JOB_TYPES.join(', ')}` }).optional().meta({ description: 'Only jobs of this type' }),
  batch_id: z.uuid({ error: 'must be a batch id (POST /v1/batches answers with one)' }).optional().meta({ description: 'Only the item jobs of this batch' }),
});

export const IdempotencyHeaderSchema = z.object({
  'Idempotency-Key': z
    .string()
    .max(255)
    .optional()
    .meta({ description: 'Beyond the contract: a retry with the same key and body replays the first response instead of creating a second job; another body gets 409' }),
});

/** GET /v1/account and MCP's get_account. */
export const AccountSchema = z
  .object({
    account_id: z.string(),
    name: z.string(),
    plan: z.enum(PLAN_NAMES as [string, ...string[]]),
    rate_limit_per_minute: z.number().int(),
    balance: z.number().int(),
    monthly_credits: z.number().int(),
    next_topup_at: Timestamp.meta({ description: 'When the balance is next topped up to monthly_credits (start of the next month, UTC)' }),
    usage_this_month: z.object(Object.fromEntries([...JOB_TYPES, 'info'].map((t) => [t, z.number().int()]))).meta({ description: 'Credits used this month by job type (charges minus refunds)' }),
    max_running_jobs: z.number().int().meta({ description: "How many of the account's jobs the plan processes at once; later ones wait pending, in order" }),
    running_jobs: z.number().int().meta({ description: "The account's jobs processing now" }),
    queued_jobs: z.number().int().meta({ description: "The account's jobs pending: waiting for a running slot or about to start" }),
  })
  .meta({ id: 'Account' });
