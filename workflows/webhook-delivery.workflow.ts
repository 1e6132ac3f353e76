import { ActivityFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { AttemptResult, WebhookActivities } from '../activities/webhook.activities';
import { TASK_QUEUES } from '../lib/job.types';

/** One attempt = one activity, never retried by Temporal: retries are the durable timers below. */
const attempt = proxyActivities<WebhookActivities>({
  taskQueue: TASK_QUEUES.control,
  // the request itself is limited to 10 s; more than this means the worker died mid-attempt
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 1 },
});

const check = proxyActivities<WebhookActivities>({
  taskQueue: TASK_QUEUES.control,
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
});

export interface WebhookDeliveryInput {
  deliveryId: string;
  accountId: string;
  webhookId: number | null;
  url: string;
  event: string;
  jobId: string;
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
  let firstAtMs: number | null = null;
  for (let i = 0; i < scheduleMs.length; i++) {
    if (i > 0 && !(await check.deliveryTargetActive({ deliveryId: input.deliveryId, webhookId: input.webhookId }))) return 'cancelled';
    const nextOffset = scheduleMs[i + 1];
    const target = { deliveryId: input.deliveryId, accountId: input.accountId, webhookId: input.webhookId, url: input.url, event: input.event, jobId: input.jobId, attempt: i + 1 };
    let r: AttemptResult;
    try {
      r = await attempt.attemptDelivery({ ...target, body: input.body, firstAttemptAtMs: firstAtMs, nextOffsetMs: nextOffset ?? null });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      // The worker stopped mid-attempt (the target may have received it): count it as failed and go on.
      await check.recordLostAttempt({ ...target, nextAttemptAtMs: null });
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
