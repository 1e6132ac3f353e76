// The requests of POST and PATCH /v1/subscriptions and the Subscription resource. Plain zod: it validates, and generates OpenAPI and MCP schemas.
import { z } from 'zod';
import { SourceUrl, TargetUrl } from '../operations/fields';
import { JOB_TYPES } from '../operations/registry';
import { SUBSCRIPTION_MAX_CHECK_SECONDS } from './types';

/** An instant as ISO 8601 UTC, as every resource shows it. */
const Timestamp = z.iso.datetime();

const CheckEvery = z
  .number({ error: 'must be a number of seconds' })
  .int('must be a whole number of seconds')
  .max(SUBSCRIPTION_MAX_CHECK_SECONDS, `must be at most ${SUBSCRIPTION_MAX_CHECK_SECONDS} (30 days)`)
  .meta({ description: 'Seconds between checks; at least the server\'s SUBSCRIPTION_MIN_CHECK_SECONDS (900 by default)' });

const Parameters = z.record(z.string(), z.unknown()).meta({ description: "The operation's fields for every new item, without url, upload_id and webhook_url" });

export const CreateSubscriptionSchema = z
  .strictObject({
    url: SourceUrl.meta({ description: 'A channel, a playlist or a podcast RSS or Atom feed' }),
    operation: z.enum(JOB_TYPES, { error: `must be one of ${JOB_TYPES.join(', ')}` }).meta({ description: 'The async operation each new item runs' }),
    parameters: Parameters.default({}),
    check_every: CheckEvery,
    start_after: z
      .literal('now')
      .or(z.iso.datetime({ offset: true }))
      .or(z.iso.date().transform((d) => `${d}T00:00:00Z`))
      .default('now')
      .meta({ description: 'Only items published after this run (`now`: the subscription\'s creation). Items already there that the source does not date are recorded as seen at the first check, not run' }),
    webhook_url: TargetUrl.optional().meta({ description: "Receives subscription.paused, each check's batch.completed and its item jobs' events" }),
  })
  .meta({ id: 'SubscriptionCreate' });

export const UpdateSubscriptionSchema = z
  .strictObject({
    paused: z.boolean({ error: 'must be true or false' }).optional(),
    check_every: CheckEvery.optional(),
    parameters: Parameters.optional().meta({ description: 'For items found from now on; batches already made keep theirs' }),
  })
  .refine((v) => v.paused !== undefined || v.check_every !== undefined || v.parameters !== undefined, { message: 'send at least one of paused, check_every, parameters' })
  .meta({ id: 'SubscriptionUpdate', minProperties: 1 });

export type CreateSubscriptionRequest = z.output<typeof CreateSubscriptionSchema>;
export type UpdateSubscriptionRequest = z.output<typeof UpdateSubscriptionSchema>;

export const SubscriptionSchema = z
  .object({
    subscription_id: z.uuid(),
    url: z.string(),
    operation: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    check_every: z.number().int(),
    start_after: Timestamp,
    webhook_url: z.string().nullable(),
    paused: z.boolean(),
    last_checked_at: Timestamp.nullable(),
    next_check_at: Timestamp.nullable().meta({ description: 'When the Schedule fires next (null while paused); a failing source may skip checks while it backs off' }),
    last_error: z.string().nullable(),
    items_seen: z.number().int().meta({ description: 'Items the archive holds: every item any check has seen' }),
    items_run: z.number().int().meta({ description: 'Jobs made from new items' }),
    created_at: Timestamp,
  })
  .meta({ id: 'Subscription' });
export const SubscriptionListSchema = z.object({ items: z.array(SubscriptionSchema), next_cursor: z.string().nullable(), has_more: z.boolean() }).meta({ id: 'SubscriptionList' });
