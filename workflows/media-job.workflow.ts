import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  ParentClosePolicy,
  patched,
  startChild,
  TimeoutFailure,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import { FAILURE_TYPES, TASK_QUEUES, type JobEnd, type JobOutput, type MediaJobInput } from '../lib/job.types';
import { control } from './activities';
import { webhookDeliveryWorkflow } from './webhook-delivery.workflow';
import { runComments } from './comments.workflow';
import { runDownload } from './download.workflow';
import { runFingerprint } from './fingerprint.workflow';
import { runPreview } from './preview.workflow';
import { runTranscribe } from './transcribe.workflow';
import { runTranslate } from './translate.workflow';

/** One durable run of one job: processing → operation → completed, or failed with a refund. */
export async function mediaJobWorkflow(input: MediaJobInput): Promise<JobEnd> {
  await control.markProcessing(input.jobId);
  let end: JobEnd;
  try {
    const output = await runOperation(input);
    end = await control.completeJob({ jobId: input.jobId, output });
  } catch (err) {
    end = await control.failJob({ jobId: input.jobId, errorMessage: describeFailure(err) });
  }
  // Single exit. Histories recorded before webhooks existed replay without this step.
  if (patched('webhook-events-v1')) await startEventDeliveries(input.jobId, end);
  return end;
}

/** One child workflow per target, not awaited; its id is stable per (job, event, target), so a retried parent starts no duplicate. */
async function startEventDeliveries(jobId: string, end: JobEnd): Promise<void> {
  const event = end.status === 'completed' ? 'job.completed' : 'job.failed';
  const plan = await control.planJobEvent({ jobId, event });
  for (const target of plan.targets) {
    const deliveryId = `whd_${jobId}_${event}_${target.key}`;
    try {
      await startChild(webhookDeliveryWorkflow, {
        workflowId: `webhook-${jobId}-${event}-${target.key}`,
        taskQueue: TASK_QUEUES.control,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // also after the first delivery has finished: the id may never run twice
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [{ deliveryId, accountId: plan.accountId, webhookId: target.webhookId, url: target.url, event, jobId, body: plan.body, scheduleMs: plan.scheduleMs }],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}

function runOperation(input: MediaJobInput): Promise<JobOutput> {
  switch (input.jobType) {
    case 'download':
      return runDownload(input.jobId, input.params);
    case 'transcribe':
      return runTranscribe(input.jobId, input.params);
    case 'translate':
      return runTranslate(input.jobId, input.params);
    case 'comments':
      return runComments(input.jobId, input.params);
    case 'preview':
      return runPreview(input.jobId, input.params);
    case 'fingerprint':
      return runFingerprint(input.jobId, input.params);
    default: {
      const unknown: never = input;
      throw ApplicationFailure.nonRetryable(`job type ${String((unknown as MediaJobInput).jobType)} is not supported`);
    }
  }
}

const USER_FACING: string[] = Object.values(FAILURE_TYPES);

/** A sentence for error_message: the innermost application message, not Temporal's wrapper text. */
export function describeFailure(err: unknown): string {
  let cur: unknown = err;
  while (cur instanceof ActivityFailure && cur.cause) cur = cur.cause;
  if (cur instanceof TimeoutFailure) return 'The job timed out: a processing step took too long or its worker stopped responding';
  if (cur instanceof CancelledFailure) return 'The job was cancelled';
  if (cur instanceof ApplicationFailure) return cur.type && USER_FACING.includes(cur.type) ? cur.message : `Processing failed: ${cur.message}`;
  return `Processing failed: ${cur instanceof Error ? cur.message : String(cur)}`;
}
