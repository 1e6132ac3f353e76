// Activity proxies shared by the workflows: one per task queue / timeout profile.
import { proxyActivities } from '@temporalio/workflow';
import type { CommentsActivities } from '../activities/comments.activities';
import type { ControlActivities } from '../activities/control.activities';
import type { EditActivities } from '../activities/edit.activities';
import type { WebhookActivities } from '../activities/webhook.activities';
import type { FetchActivities } from '../activities/fetch.activities';
import type { PreviewActivities } from '../activities/preview.activities';
import type { ProcessActivities } from '../activities/process.activities';
import type { SpeechActivities } from '../activities/speech.activities';
import { FAILURE_TYPES, TASK_QUEUES } from '../lib/job.types';

const nonRetryableErrorTypes = Object.values(FAILURE_TYPES);

/** Quick, idempotent database writes: retry for minutes, a database blip must not lose a job. */
export const control = proxyActivities<ControlActivities>({
  taskQueue: TASK_QUEUES.control,
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
});

/** Network-bound (yt-dlp): a few retries for transient failures; heartbeats detect a dead worker within a minute. */
export const fetch = proxyActivities<FetchActivities>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumInterval: '2 minutes', maximumAttempts: 3, nonRetryableErrorTypes },
});

/** Short metadata reads for the synchronous info call. */
export const fetchInfo = proxyActivities<FetchActivities>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '45 seconds',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 2, nonRetryableErrorTypes },
});

/** CPU-bound (ffmpeg, sharp). */
export const process = proxyActivities<ProcessActivities>({
  taskQueue: TASK_QUEUES.process,
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumInterval: '2 minutes', maximumAttempts: 3, nonRetryableErrorTypes },
});

/** Comment extraction (yt-dlp or PeerTube's API) on the media-fetch queue: like `fetch`, a few retries for transient failures. */
export const comments = proxyActivities<CommentsActivities>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumInterval: '2 minutes', maximumAttempts: 3, nonRetryableErrorTypes },
});

/** Webhook planning on the control queue (database reads): same profile as control. */
export const hooks = proxyActivities<WebhookActivities>({
  taskQueue: TASK_QUEUES.control,
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 30 },
});

/** CPU-bound speech (faster-whisper, Apertium) on the media-speech queue; heartbeats from progress and a keep-alive timer. */
export const speech = proxyActivities<SpeechActivities>({
  taskQueue: TASK_QUEUES.speech,
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumInterval: '2 minutes', maximumAttempts: 3, nonRetryableErrorTypes },
});

/** Clip/audio processing of downloads, previews and fingerprints: CPU-bound (ffmpeg, sharp) on media-process, like `process`. */
export const media = proxyActivities<EditActivities & PreviewActivities>({
  taskQueue: TASK_QUEUES.process,
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumInterval: '2 minutes', maximumAttempts: 3, nonRetryableErrorTypes },
});
