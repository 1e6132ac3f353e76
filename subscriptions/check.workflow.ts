import { ActivityFailure, ApplicationFailure, ParentClosePolicy, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import { batchWorkflow } from '../batches/batch.workflow';
import { batchWorkflowId } from '../batches/types';
import { failureOf } from '../jobs/media-job.workflow';
import { control, mediaInfoExpansion } from '../workflows/activity-proxies';
import { startEventDeliveries } from '../workflows/event-deliveries';
import { PLATFORM_REFUSED_TYPE } from '../lib/job-failure';
import type { SubscriptionCheckInput } from './types';

/** Whether the check failed because the platform refuses the service (a 429, a bot check), not because of this source. */
function platformRefused(err: unknown): boolean {
  let cur: unknown = err;
  while (cur instanceof ActivityFailure && cur.cause) cur = cur.cause;
  return cur instanceof ApplicationFailure && cur.type === PLATFORM_REFUSED_TYPE;
}

/**
 * One check of a subscription, started by its Schedule: the source expanded (on media-info), what the
 * archive has not seen recorded, and the new items run as a batch of the subscription (its own
 * workflow, not awaited: the next check comes on time however long the items take). A failed check
 * backs off; too many in a row pause the subscription and send subscription.paused.
 */
export async function subscriptionCheckWorkflow(input: SubscriptionCheckInput): Promise<{ newItems: number }> {
  const { subscriptionId } = input;
  const plan = await control.beginSubscriptionCheck({ subscriptionId });
  if (!plan.run) return { newItems: 0 };
  let file: string;
  try {
    ({ file } = await mediaInfoExpansion.expandBatchSource({ batchId: plan.checkId, source: { url: plan.url }, selection: { maxItems: plan.maxItems, after: null, before: null, order: 'newest' } }));
  } catch (err) {
    const { paused } = await control.subscriptionCheckFailed({ subscriptionId, message: failureOf(err).message, refused: platformRefused(err) });
    if (paused) await startEventDeliveries(await control.planSubscriptionEvent({ subscriptionId }), 'subscription.paused', subscriptionId, plan.checkId);
    return { newItems: 0 };
  }
  const found = await control.recordSubscriptionCheck({ subscriptionId, checkId: plan.checkId, file });
  if (found.batch) {
    try {
      await startChild(batchWorkflow, {
        workflowId: batchWorkflowId(found.batch.batchId),
        taskQueue: 'control',
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [found.batch],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  return { newItems: found.newItems };
}
