// Activity proxies: one per task queue and timeout profile, each typed by the queue table, so a
// workflow can only call an activity that is registered on the queue it is sent to.
import { ActivityCancellationType, proxyActivities, proxyLocalActivities, type ActivityInterfaceFor, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import { NON_RETRYABLE_FAILURE_TYPES } from '../lib/job-failure';
import type { TaskQueue } from '../lib/queues';
import type { PlannedActivities } from './activity-plan';

const nonRetryableErrorTypes = NON_RETRYABLE_FAILURE_TYPES;

function queueProxy<Q extends TaskQueue>(taskQueue: Q, options: Omit<ActivityOptions, 'taskQueue'>): ActivityInterfaceFor<PlannedActivities<Q>> {
  return proxyActivities<PlannedActivities<Q>>({ ...options, taskQueue });
}

/**
 * Long tool runs (yt-dlp, ffmpeg, Whisper): a few retries for transient failures, never for user
 * errors; heartbeats (every second, from the worker's activity interceptor) detect a dead worker
 * within 20 s, so a killed worker's step soon runs on another and its job's running slot moves on. On cancellation the
 * workflow waits until the step has stopped its tools, so the cleanup after it finds nothing running.
 */
function toolRun(startToCloseTimeout: ActivityOptions['startToCloseTimeout'] = '2 hours'): Omit<ActivityOptions, 'taskQueue'> {
  return {
    startToCloseTimeout,
    heartbeatTimeout: '20 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumInterval: '2 minutes', maximumAttempts: 3, nonRetryableErrorTypes },
  };
}

const controlStep = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
} satisfies Omit<ActivityOptions, 'taskQueue'> & LocalActivityOptions;

/** Quick, idempotent database work (job state, credits, webhook planning): retry for minutes, a database blip must not lose a job. */
export const control = queueProxy('control', controlStep);

/**
 * The same work as local activities: run by the worker that runs the workflow (a control worker, which
 * registers them), inside its workflow task, so no activity task is scheduled, polled and reported.
 * Each is idempotent, as a local activity may run again when its worker dies before reporting it.
 */
export const controlLocal = proxyLocalActivities<PlannedActivities<'control'>>(controlStep);

/** One webhook attempt = one activity, never retried by Temporal: retries are the delivery workflow's durable timers. */
export const webhookAttempt = queueProxy('control', {
  // the request itself is limited to 10 s; more than this means the worker died mid-attempt
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 1 },
});

/** A delivery's bookkeeping on the webhooks queue: quick database work, retried like control's. */
export const webhookControl = queueProxy('webhooks', {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
});

/** One attempt on the webhooks queue (as webhookAttempt): never retried by Temporal. */
export const webhookAttemptOwn = queueProxy('webhooks', {
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 1 },
});

/** Network-bound: yt-dlp fetches and comment extraction. */
export const mediaFetch = queueProxy('media-fetch', toolRun());

/** Short metadata reads for the synchronous info call, on a queue of their own. */
export const mediaInfo = queueProxy('media-info', {
  startToCloseTimeout: '45 seconds',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 2, nonRetryableErrorTypes },
});

/** A batch's source expanded (a feed read, yt-dlp's flat listing): cut off by the step itself after EXPANSION_SECONDS, retried once. */
export const mediaInfoExpansion = queueProxy('media-info', {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '2 seconds', maximumAttempts: 2, nonRetryableErrorTypes },
});

/** CPU-bound ffmpeg and sharp: download finishing and editing, previews, fingerprints. */
export const mediaProcess = queueProxy('media-process', toolRun());

/** CPU-bound speech (faster-whisper, Apertium); long sources take hours on small models. */
export const mediaSpeech = queueProxy('media-speech', toolRun('6 hours'));

/** The scheduled yt-dlp update where yt-dlp runs: an install from PyPI and a self-check, minutes at most. */
export const toolUpdate = queueProxy('media-fetch', {
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 minute', maximumAttempts: 2 },
});
