import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  patched,
  setHandler,
  sleep,
  startChild,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { ApplicationFailureCategory, WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import { failureKindOf, INTERNAL_FAILURE_MESSAGE, JOB_FAILED, PLATFORM_REFUSED_TYPE, TOOL_FAILURE_TYPES, type StoredFailureKind } from '../lib/job-failure';
import { platformOfUrl } from '../lib/source-sites';
import { CANCELLED_MESSAGE, jobWorkflowId, type JobEnd, type JobStatus, type MediaJobInput } from './types';
import type { JobOutput } from '../lib/job-reports';
import { ACCOUNT_ID, JOB_ID, JOB_STATUS } from '../lib/search-attributes';
import { withoutInternals } from '../lib/user-text';
import { control, controlLocal } from '../workflows/activity-proxies';
import { runOperation } from '../workflows/run-operation';
import { webhookDeliveryWorkflow } from '../webhooks/delivery.workflow';

/**
 * One durable run of one job: processing → operation → completed, or failed with a refund. A
 * cancellation stops the running step (its tools are killed) and ends the job failed, refunded,
 * with its job.failed event; the workflow's own status says how the job ended.
 */
export async function mediaJobWorkflow(input: MediaJobInput): Promise<JobEnd> {
  // Histories recorded before cancellation was handled replay through the earlier lifecycle.
  if (!patched('job-lifecycle-v2')) return lifecycleV1(input);
  // JobStatus follows the job for operators' queries, on workflows started with the attributes (registered on the cluster)
  const tracked = patched('job-search-attributes-v1') && workflowInfo().typedSearchAttributes.get(JOB_ID) !== undefined;
  const setStatus = (status: JobStatus): void => {
    if (tracked) upsertSearchAttributes([{ key: JOB_STATUS, value: status }]);
  };
  // jobs since per-account slots wait pending until one of their plan's running slots is theirs
  const slots = patched('account-running-slots-v1');
  // the job's own state changes as local activities: two fewer hand-offs before a client sees it complete
  const steps: JobSteps = patched('local-job-steps-v1') ? controlLocal : control;
  let end: JobEnd;
  let failure: { message: string; kind: StoredFailureKind } | null = null;
  // jobs since the platform breakers wait, pending, while their platform refuses the service
  const platform = patched('platform-breaker-v1') ? platformOfUrl(input.sourceUrl) : null;
  try {
    let output: JobOutput;
    for (let waitingSince: number | null = null; ; ) {
      const turn = platform ? await waitForPlatform(steps, input.jobId, platform, waitingSince) : null;
      if (slots) await waitForRunningSlot(steps, input.jobId);
      else await control.markProcessing(input.jobId);
      setStatus('processing');
      try {
        output = await runOperation(input);
        if (turn?.tracked) await steps.platformWorked(platform!);
        break;
      } catch (err) {
        const refusal = platform ? platformRefusal(err) : null;
        if (!refusal) throw err;
        // the platform refused the service, not this video: back to pending to wait for it (its
        // running slot to the account's next job), counted against the platform's breaker
        waitingSince ??= workflowNow();
        const state = await steps.platformRefused({ jobId: input.jobId, platform: platform!, reason: refusal, waitingSince });
        if (state.expired) throw waitedTooLong(platform!, refusal, waitingSince);
        setStatus('pending');
        if (slots) await wakeJobsDueASlot(steps, input.jobId);
        // an open breaker's probe schedule decides when it goes again; a closed one, this retry
        if (!state.open) await sleep(state.retryInMs);
      }
    }
    end = await steps.completeJob({ jobId: input.jobId, output });
  } catch (err) {
    failure = isCancellation(err) ? { message: CANCELLED_MESSAGE, kind: 'cancelled' } : failureOf(err);
    // failJob writes the job's one "job failed" line; this keeps the raw cause behind the user's message for debugging
    if (failure.kind !== 'cancelled') log.debug('job step failed', { jobType: input.jobType, errorMessage: failure.message, cause: err instanceof Error ? err.message : String(err) });
    const { message: errorMessage, kind: failureKind } = failure;
    // Refund and notify even when cancelled: these steps must not be cancelled themselves.
    end = await CancellationScope.nonCancellable(() => steps.failJob({ jobId: input.jobId, errorMessage, failureKind }));
  }
  setStatus(end.status);
  if (slots) await CancellationScope.nonCancellable(() => wakeJobsDueASlot(steps, input.jobId));
  await CancellationScope.nonCancellable(() => startEventDeliveries(input.jobId, end, tracked, steps));
  if (end.status === 'completed' || !failure) return end;
  if (failure.kind === 'cancelled') throw new CancelledFailure(failure.message);
  // Failed jobs show as Failed in the Temporal UI (the user's error is no fault of the service: benign).
  throw ApplicationFailure.create({ message: failure.message, type: JOB_FAILED, nonRetryable: true, category: ApplicationFailureCategory.BENIGN });
}

/** The job's state changes: activities on the control queue, or (since local-job-steps-v1) local ones. */
type JobSteps = typeof control;

/** Sent to a waiting job when a slot of its account frees. */
export const slotFreedSignal = defineSignal('slotFreed');

/** How often a waiting job looks for a slot by itself, should the signal of a finishing job never come. */
const SLOT_RECHECK = '2 minutes';

/**
 * Claims a running slot of the job's account, or waits pending until one frees: a finishing job of
 * the account signals the next in line, and a periodic re-check covers a signal that never came.
 */
async function waitForRunningSlot(steps: JobSteps, jobId: string): Promise<void> {
  let woken = false;
  setHandler(slotFreedSignal, () => {
    woken = true;
  });
  for (;;) {
    woken = false;
    if ((await steps.claimRunningSlot(jobId)) !== 'waiting') return;
    // rare: every waiting job's re-check is work for the shared queues while its account bursts
    await condition(() => woken, SLOT_RECHECK);
  }
}

/**
 * Waits, pending, until the job may go to its platform: at once when its breaker is closed, else as
 * the platform's one probe once the backoff has passed, or when a probe got through. A wait past
 * PLATFORM_BREAKER_MAX_WAIT_SECONDS fails the job (refunded) saying the platform refuses requests.
 */
async function waitForPlatform(steps: JobSteps, jobId: string, platform: string, since: number | null): Promise<{ tracked: boolean }> {
  const waitingSince = since ?? workflowNow();
  for (let waited = since !== null; ; waited = true) {
    const turn = await steps.platformTurn({ jobId, platform, waitingSince, waited });
    if (turn.go) return { tracked: turn.tracked };
    if ('expired' in turn) throw waitedTooLong(platform, turn.reason, waitingSince);
    await sleep(turn.waitMs);
  }
}

/** Workflow time in ms: in the workflow sandbox `Date` is the history's deterministic clock, not the wall's. */
function workflowNow(): number {
  return new Date().getTime();
}

/** The failure of a job that waited for its platform as long as it may. */
function waitedTooLong(platform: string, reason: string, waitingSince: number): ApplicationFailure {
  const minutes = Math.max(1, Math.round((workflowNow() - waitingSince) / 60_000));
  const why = /\(([^)]*)\)$/.exec(reason)?.[1] ?? 'it refuses requests';
  return ApplicationFailure.create({
    message: `${platform} is refusing requests from this service (${why}); the job waited ${minutes} minute${minutes === 1 ? '' : 's'} for it and its credits were refunded. Try again later`,
    type: PLATFORM_REFUSED_TYPE,
    nonRetryable: true,
  });
}

/** The platform's refusal of the service behind a failed step, as a person reads it, or null for any other failure. */
function platformRefusal(err: unknown): string | null {
  let cur: unknown = err;
  while (cur instanceof ActivityFailure && cur.cause) cur = cur.cause;
  return cur instanceof ApplicationFailure && cur.type === PLATFORM_REFUSED_TYPE ? cur.message : null;
}

/** Lets the account's next waiting jobs know a slot is free; one that has ended or never started is skipped. */
async function wakeJobsDueASlot(steps: JobSteps, jobId: string): Promise<void> {
  const due = await steps.jobsDueASlot(jobId);
  await Promise.all(
    due.map(async (id) => {
      try {
        await getExternalWorkflowHandle(jobWorkflowId(id)).signal(slotFreedSignal);
      } catch {
        // it ended meanwhile, or its workflow has not started yet: it claims its slot when it runs
      }
    }),
  );
}

/** The lifecycle before job-lifecycle-v2: kept only so recorded histories replay. */
async function lifecycleV1(input: MediaJobInput): Promise<JobEnd> {
  await control.markProcessing(input.jobId);
  let end: JobEnd;
  try {
    const output = await runOperation(input);
    end = await control.completeJob({ jobId: input.jobId, output });
  } catch (err) {
    const { message: errorMessage, kind: failureKind } = failureOf(err);
    end = await control.failJob({ jobId: input.jobId, errorMessage, failureKind });
  }
  // Single exit. Histories recorded before webhooks existed replay without this step.
  if (patched('webhook-events-v1')) await startEventDeliveries(input.jobId, end);
  return end;
}

/**
 * One child workflow per target, not awaited; its id is stable per (job, event, target), so a
 * retried parent starts no duplicate. Since the webhooks queue exists they run there, all started
 * at once; older histories replay their one-by-one starts on control.
 */
async function startEventDeliveries(jobId: string, end: JobEnd, tracked = false, steps: JobSteps = control): Promise<void> {
  const event = end.status === 'completed' ? 'job.completed' : 'job.failed';
  const plan = await steps.planJobEvent({ jobId, event });
  if (!plan.targets.length) return;
  const own = patched('webhook-queue-v1');
  const start = async (target: (typeof plan.targets)[number]): Promise<void> => {
    const deliveryId = `whd_${jobId}_${event}_${target.key}`;
    try {
      await startChild(webhookDeliveryWorkflow, {
        workflowId: `webhook-${jobId}-${event}-${target.key}`,
        taskQueue: own ? 'webhooks' : 'control',
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // also after the first delivery has finished: the id may never run twice
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        ...(tracked ? { typedSearchAttributes: [{ key: JOB_ID, value: jobId }, { key: ACCOUNT_ID, value: plan.accountId }] } : {}),
        args: [{ deliveryId, accountId: plan.accountId, webhookId: target.webhookId, url: target.url, event, jobId, body: plan.body, scheduleMs: plan.scheduleMs }],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  };
  if (own) {
    await Promise.all(plan.targets.map(start));
    return;
  }
  for (const target of plan.targets) await start(target);
}

/**
 * The job's error_message: a sentence a person can act on. User errors and phrased engine failures
 * keep their message; a tool that kept failing, or an internal fault, is described without its raw
 * output (the worker logs that).
 */
export function describeFailure(err: unknown): string {
  return failureOf(err).message;
}

/** The job's error_message and its kind, which the job row stores beside it: readers go by the kind, never the text. */
export function failureOf(err: unknown): { message: string; kind: StoredFailureKind } {
  const { message, kind } = failureSentence(err);
  return { message: withoutInternals(message), kind };
}

function failureSentence(err: unknown): { message: string; kind: StoredFailureKind } {
  let cur: unknown = err;
  while (cur instanceof ActivityFailure && cur.cause) cur = cur.cause;
  if (cur instanceof TimeoutFailure) return { message: 'The job timed out: a processing step took too long or its worker stopped responding', kind: 'timeout' };
  if (cur instanceof CancelledFailure) return { message: 'The job was cancelled', kind: 'cancelled' };
  const kind = cur instanceof ApplicationFailure ? failureKindOf(cur.type) : 'internal';
  if (kind === 'tool' && (cur as ApplicationFailure).type === TOOL_FAILURE_TYPES.ffmpeg && !(cur as ApplicationFailure).message.startsWith('The source ')) {
    // a worker of an earlier release put ffmpeg's own words in the message
    return { message: 'The source could not be converted: it may be damaged or in a form that cannot be converted', kind };
  }
  // the user's errors and the tools' failures are phrased for people where they are thrown
  if (kind !== 'internal') return { message: (cur as ApplicationFailure).message, kind };
  return { message: INTERNAL_FAILURE_MESSAGE, kind };
}
