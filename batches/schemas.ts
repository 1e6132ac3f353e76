// The request of POST /v1/batches and the Batch resource. Plain zod: it validates, and generates OpenAPI and MCP schemas.
import { z } from 'zod';
import { SourceUrl, TargetUrl } from '../operations/fields';
import { JOB_TYPES } from '../operations/registry';
import { BATCH_ITEM_STATUSES, BATCH_STATUSES, LIST_OPERATION } from './types';

/** An instant as ISO 8601 UTC, as every resource shows it. */
const Timestamp = z.iso.datetime();

/** The most URLs one `urls` source takes. */
export const MAX_BATCH_URLS = 10_000;

const BATCH_OPERATIONS = [...JOB_TYPES, LIST_OPERATION] as [string, ...string[]];

const PublishedBound = (which: string) =>
  z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 date and time, such as 2026-11-01T00:00:00Z' })
    .or(z.iso.date({ error: 'must be an ISO 8601 date, such as 2026-11-01' }).transform((d) => `${d}T00:00:00Z`))
    .transform((v) => new Date(v).toISOString())
    .optional()
    .meta({ description: `Only items published ${which} this instant (items the source does not date are left out)`, example: '2026-11-01T00:00:00Z' });

export const CreateBatchSchema = z
  .strictObject({
    operation: z.enum(BATCH_OPERATIONS, { error: `must be one of ${BATCH_OPERATIONS.join(', ')}` }).meta({ description: 'The async operation each item runs, or `list` to expand the source and run nothing (1 credit)' }),
    parameters: z.record(z.string(), z.unknown()).default({}).meta({ description: "The operation's fields for every item, without url, upload_id and webhook_url" }),
    source: z
      .union([
        z.strictObject({ url: SourceUrl.meta({ description: 'A playlist, a channel, a podcast RSS or Atom feed, or a page with several videos' }) }),
        z.strictObject({ urls: z.array(SourceUrl).min(1, 'must list at least one URL').max(MAX_BATCH_URLS, `must list at most ${MAX_BATCH_URLS} URLs`) }),
      ], { error: 'must be {"url": …} (a collection) or {"urls": […]} (a list of URLs)' })
      .meta({ description: 'Where the items come from' }),
    max_items: z.number({ error: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').optional().meta({ description: "At most this many items (the plan's cap by default, and at most)" }),
    after: PublishedBound('after'),
    before: PublishedBound('before'),
    order: z.enum(['newest', 'oldest'], { error: 'must be newest or oldest' }).default('newest').meta({ description: 'By publication date; undated items keep the source order, after dated ones' }),
    webhook_url: TargetUrl.optional().meta({ description: "Receives batch.completed, and each item job's own events" }),
  })
  .refine((v) => !v.after || !v.before || v.after < v.before, { message: 'after must be earlier than before', path: ['before'] })
  .meta({ id: 'BatchCreate' });

export type CreateBatchRequest = z.output<typeof CreateBatchSchema>;

const CountsSchema = z.object({ total: z.number().int(), pending: z.number().int(), processing: z.number().int(), completed: z.number().int(), failed: z.number().int(), skipped: z.number().int() }).meta({ id: 'BatchCounts' });

const BatchFields = {
  batch_id: z.uuid(),
  status: z.enum(BATCH_STATUSES),
  operation: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  source: z.union([z.object({ url: z.string() }), z.object({ urls: z.array(z.string()) })]),
  max_items: z.number().int(),
  after: Timestamp.nullable(),
  before: Timestamp.nullable(),
  order: z.enum(['newest', 'oldest']),
  counts: CountsSchema,
  error: z.string().nullable().meta({ description: 'Why the source could not be expanded (status failed)' }),
  note: z.string().nullable().meta({ description: 'What a limit left out of the source, and which limit' }),
  credits_charged: z.number().int().meta({ description: "The batch's own charge (`list`); each item job carries its own" }),
  webhook_url: z.string().nullable(),
  subscription_id: z.uuid().nullable().meta({ description: 'The subscription whose check found these items; null for a batch created by a client' }),
  created_at: Timestamp,
  completed_at: Timestamp.nullable(),
};

const BatchSummarySchema = z.object(BatchFields).meta({ id: 'BatchSummary' });

const BatchItemSchema = z
  .object({
    url: z.string(),
    title: z.string().nullable(),
    published_at: Timestamp.nullable(),
    duration: z.number().nullable(),
    thumbnail: z.string().nullable(),
    status: z.enum(BATCH_ITEM_STATUSES),
    job_id: z.uuid().nullable(),
    reason: z.string().nullable().meta({ description: 'Why it was skipped or failed' }),
  })
  .meta({ id: 'BatchItem' });

export const BatchSchema = z.object({ ...BatchFields, items: z.array(BatchItemSchema), next_cursor: z.string().nullable(), has_more: z.boolean() }).meta({ id: 'Batch' });
export const BatchListSchema = z.object({ items: z.array(BatchSummarySchema), next_cursor: z.string().nullable(), has_more: z.boolean() }).meta({ id: 'BatchList' });
export const BatchCreatedSchema = z.object({ batch_id: z.uuid(), status: z.literal('expanding'), operation: z.string(), credits_charged: z.number().int(), created_at: Timestamp }).meta({ id: 'BatchCreated' });
