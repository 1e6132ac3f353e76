import { ActivityFailure, ApplicationFailure, proxyActivities, TimeoutFailure, CancelledFailure } from '@temporalio/workflow';
import type { ControlActivities } from '../activities/control.activities';
import type { FetchActivities } from '../activities/fetch.activities';
import type { ProcessActivities } from '../activities/process.activities';
import { FAILURE_TYPES, TASK_QUEUES, type JobEnd, type JobOutput, type MediaJobInput } from '../lib/job.types';

const nonRetryable = Object.values(FAILURE_TYPES);

// Quick, idempotent database writes: retry for a long time, a database blip must not lose a job.
const control = proxyActivities<ControlActivities>({
  taskQueue: TASK_QUEUES.control,
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
});

// Network-bound: a few retries for transient failures; heartbeats detect a dead worker within a minute.
const fetch = proxyActivities<FetchActivities>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumInterval: '2 minutes', maximumAttempts: 3, nonRetryableErrorTypes: nonRetryable },
});

const process = proxyActivities<ProcessActivities>({
  taskQueue: TASK_QUEUES.process,
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumInterval: '2 minutes', maximumAttempts: 3, nonRetryableErrorTypes: nonRetryable },
});

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

async function runOperation(input: MediaJobInput): Promise<JobOutput> {
  switch (input.jobType) {
    case 'download':
      return runDownload(input);
    default:
      throw ApplicationFailure.nonRetryable(`job type ${String((input as { jobType: unknown }).jobType)} is not supported`);
  }
}

async function runDownload(input: MediaJobInput): Promise<JobOutput> {
  const { jobId, params } = input;
  const source = await fetch.probeSource(params.url);
  const sourceFile = await fetch.downloadSource({ jobId, url: params.url, quality: params.quality, format: params.format, progressRange: [0, 80] });
  return process.finalizeDownload({ jobId, sourceFile, quality: params.quality, format: params.format, title: source.title, progressRange: [80, 99] });
}

/** A sentence for error_message: the innermost application message, not Temporal's wrapper text. */
export function describeFailure(err: unknown): string {
  let cur: unknown = err;
  while (cur instanceof ActivityFailure && cur.cause) cur = cur.cause;
  if (cur instanceof TimeoutFailure) return 'The job timed out: a processing step took too long or its worker stopped responding';
  if (cur instanceof CancelledFailure) return 'The job was cancelled';
  if (cur instanceof ApplicationFailure) {
    if (cur.type === FAILURE_TYPES.unsupported || cur.type === FAILURE_TYPES.unavailable || cur.type === FAILURE_TYPES.rejected) return cur.message;
    return `Processing failed: ${cur.message}`;
  }
  return `Processing failed: ${cur instanceof Error ? cur.message : String(cur)}`;
}
