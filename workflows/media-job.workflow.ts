import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure } from '@temporalio/workflow';
import { FAILURE_TYPES, type JobEnd, type JobOutput, type MediaJobInput } from '../lib/job.types';
import { control } from './activities';
import { runDownload } from './download.workflow';

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
  // Single exit: event delivery for job.completed / job.failed starts here.
  return end;
}

function runOperation(input: MediaJobInput): Promise<JobOutput> {
  switch (input.jobType) {
    case 'download':
      return runDownload(input.jobId, input.params);
    default: {
      const unknown: never = input.jobType;
      throw ApplicationFailure.nonRetryable(`job type ${String(unknown)} is not supported`);
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
