import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { EventPlan } from '../webhooks/activities';
import { webhookDeliveryWorkflow } from '../webhooks/delivery.workflow';

/**
 * One delivery workflow per target of a batch's or a subscription's event, not awaited. `occurrence`
 * names this occurrence of the event (the batch, a check): the ids are stable per occurrence and
 * target and may never run twice, so a retried parent sends no duplicate.
 */
export async function startEventDeliveries(plan: EventPlan, event: string, subjectId: string, occurrence: string): Promise<void> {
  await Promise.all(
    plan.targets.map(async (target) => {
      try {
        await startChild(webhookDeliveryWorkflow, {
          workflowId: `webhook-${occurrence}-${event}-${target.key}`,
          taskQueue: 'webhooks',
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          // the delivery log's job_id column holds the batch's or subscription's id
          args: [{ deliveryId: `whd_${occurrence}_${event}_${target.key}`, accountId: plan.accountId, webhookId: target.webhookId, url: target.url, event, jobId: subjectId, body: plan.body, scheduleMs: plan.scheduleMs }],
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }),
  );
}
