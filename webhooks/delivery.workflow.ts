import { ActivityFailure, patched, sleep } from '@temporalio/workflow';
import type { AttemptResult } from './activities';
import type { DeliveryTarget } from './events';
import { control, webhookAttempt, webhookAttemptOwn, webhookControl } from '../workflows/activity-proxies';

export interface WebhookDeliveryInput extends Omit<DeliveryTarget, 'attempt'> {
  /** The exact bytes every attempt sends. */
  body: string;
  /** Attempt offsets from the first attempt, ms: [0, 1 min, 5 min, 30 min]. */
  scheduleMs: number[];
}

export type WebhookDeliveryOutcome = 'succeeded' | 'gone' | 'failed' | 'cancelled';

/**
 * Delivers one event to one target: an attempt at each offset of the schedule (measured from the
 * first attempt) until one succeeds, the target answers 410, or the endpoint is deactivated or deleted.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutcome> {
  const { scheduleMs } = input;
  // deliveries started since the webhooks queue existed do all their work there, apart from jobs
  const own = patched('webhook-queue-v1');
  const bookkeeping = own ? webhookControl : control;
  const attempts = own ? webhookAttemptOwn : webhookAttempt;
  let firstAtMs: number | null = null;
  for (let i = 0; i < scheduleMs.length; i++) {
    if (i > 0 && !(await bookkeeping.deliveryTargetActive({ deliveryId: input.deliveryId, webhookId: input.webhookId }))) return 'cancelled';
    const nextOffset = scheduleMs[i + 1];
    const target = { deliveryId: input.deliveryId, accountId: input.accountId, webhookId: input.webhookId, url: input.url, event: input.event, jobId: input.jobId, attempt: i + 1 };
    let r: AttemptResult;
    try {
      r = await attempts.attemptDelivery({ ...target, body: input.body, firstAttemptAtMs: firstAtMs, nextOffsetMs: nextOffset ?? null });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      // The worker stopped mid-attempt, or its answer was lost (the target may have received it): unless
      // the log says it was received, count it as failed and go on. (Histories from before this
      // returned a value replay it as undefined.)
      if ((await bookkeeping.recordLostAttempt({ ...target, nextAttemptAtMs: null })) === true) return 'succeeded';
      if (nextOffset === undefined) break;
      await sleep(nextOffset - (scheduleMs[i] ?? 0));
      continue;
    }
    firstAtMs ??= r.startedAtMs;
    if (r.outcome !== 'failed') return r.outcome;
    if (nextOffset === undefined) break;
    await sleep(Math.max(0, firstAtMs + nextOffset - r.finishedAtMs));
  }
  return 'failed';
}
