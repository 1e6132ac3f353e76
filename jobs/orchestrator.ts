import type { MediaJobInput } from './types';
import type { ProgressDetails } from '../lib/job-reports';
import type { PlanName } from '../lib/plans';
import type { VideoInfo } from '../lib/video-info';
import type { BatchInput } from '../batches/types';
import type { SubscriptionScheduleSpec } from '../subscriptions/types';

/** `refused`: the platform refuses the service for now (rate limit, bot check), whatever the video. */
export type InfoErrorKind = 'unsupported' | 'unavailable' | 'rejected' | 'refused' | 'timeout' | 'failed';

/** Why a metadata read failed, so the API can pick the status. */
export class InfoError extends Error {
  constructor(
    readonly kind: InfoErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'InfoError';
  }
}

/** What the API needs from the job engine. Temporal implements it; API tests may stub it. */
export interface Orchestrator {
  /** Starts the job's durable workflow; idempotent per job id. True when this call started it. */
  startJob(input: MediaJobInput): Promise<boolean>;
  /** Runs the metadata workflow and waits for it, in the caller's fair share of the info workers. Throws InfoError. */
  fetchInfo(url: string, caller?: { accountId: string; plan: PlanName }): Promise<VideoInfo>;
  /**
   * Asks the job's workflow to stop (Temporal cancellation), starting it first if it was never
   * started, so the cancellation ends it like any other: failed, refunded, job.failed delivered.
   * Resolves false when the workflow had already ended.
   */
  cancelJob(input: MediaJobInput): Promise<boolean>;
  /** Resolves when the job engine answers (readiness); rejects with why not. */
  checkReachable(): Promise<void>;
  /** Live progress (0..100) from the running activity's heartbeat, or null when unknown. */
  jobProgress(jobId: string): Promise<number | null>;
  /** What the running activity's heartbeat says: progress, and for speech the segments recognised so far. */
  jobDetails(jobId: string): Promise<ProgressDetails | null>;
  /**
   * Waits for the job's workflow to close: `ended` once it has (its row is final), `running` when
   * the time is over or the signal fires first, `unknown` when the engine cannot say (no such
   * workflow yet, or the engine is away): the row is then the record.
   */
  awaitJobEnd(jobId: string, wait: { timeoutMs: number; signal?: AbortSignal }): Promise<'ended' | 'running' | 'unknown'>;
  /** Starts a batch's workflow (idempotent per batch id). */
  startBatch(input: BatchInput): Promise<void>;
  /** Asks a batch's workflow to cancel its unfinished items; false when it had already ended. */
  cancelBatch(batchId: string): Promise<boolean>;
  /** Creates a subscription's Schedule, or brings it up to date (interval, paused). */
  upsertSubscriptionSchedule(spec: SubscriptionScheduleSpec): Promise<void>;
  /** Removes a subscription's Schedule (gone already is fine). */
  deleteSubscriptionSchedule(subscriptionId: string): Promise<void>;
  /** Runs a subscription's check now. */
  triggerSubscriptionSchedule(subscriptionId: string): Promise<void>;
  /** Pauses a Schedule, with a note the Temporal UI shows. */
  pauseSchedule(scheduleId: string, note: string): Promise<void>;
}

export { jobWorkflowId } from './types';
