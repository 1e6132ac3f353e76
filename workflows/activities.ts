// Activity proxies shared by the workflows: one per task queue and timeout profile.
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { CommentsActivities } from '../activities/comments.activities';
import type { ControlActivities } from '../activities/control.activities';
import type { EditActivities } from '../activities/edit.activities';
import type { FetchActivities } from '../activities/fetch.activities';
import type { PreviewActivities } from '../activities/preview.activities';
import type { ProcessActivities } from '../activities/process.activities';
import type { SpeechActivities } from '../activities/speech.activities';
import type { WebhookActivities } from '../activities/webhook.activities';
import { FAILURE_TYPES, TASK_QUEUES } from '../lib/job.types';

const nonRetryableErrorTypes = Object.values(FAILURE_TYPES);

/** Long tool runs (yt-dlp, ffmpeg, Whisper): a few retries for transient failures, never for user errors; heartbeats detect a dead worker within a minute. */
function toolRun(taskQueue: string, startToCloseTimeout: ActivityOptions['startToCloseTimeout'] = '2 hours'): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout,
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumInterval: '2 minutes', maximumAttempts: 3, nonRetryableErrorTypes },
  };
}

/** Quick, idempotent database work (job state, credits, webhook planning): retry for minutes, a database blip must not lose a job. */
export const control = proxyActivities<ControlActivities & WebhookActivities>({
  taskQueue: TASK_QUEUES.control,
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
});

/** Network-bound: yt-dlp fetches and comment extraction. */
export const fetch = proxyActivities<FetchActivities & CommentsActivities>(toolRun(TASK_QUEUES.fetch));

/** Short metadata reads for the synchronous info call. */
export const fetchInfo = proxyActivities<FetchActivities>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '45 seconds',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 2, nonRetryableErrorTypes },
});

/** CPU-bound ffmpeg and sharp: download finishing and editing, previews, fingerprints. */
export const process = proxyActivities<ProcessActivities & EditActivities & PreviewActivities>(toolRun(TASK_QUEUES.process));

/** CPU-bound speech (faster-whisper, Apertium); long sources take hours on small models. */
export const speech = proxyActivities<SpeechActivities>(toolRun(TASK_QUEUES.speech, '6 hours'));
