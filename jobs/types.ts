// Job types, states and the workflow boundary: pure, so the workflow bundle can load it. What the
// steps report back (JobOutput, ProgressDetails, SourceSummary) is in lib/job-reports.ts, below the
// operations: this file knows the operation registry (JobType, JobParams).
import type { JobParams, JobType } from '../operations/registry';
import type { PlanName } from '../lib/plans';

export type { JobType };
export const JOB_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** The workflow input of one job: a discriminated union over the job types. */
export type MediaJobInput = {
  // plan: the account's plan at creation (its source limits); absent on jobs started by older releases.
  // jobsAhead: the account's jobs already processing or pending when it was created (its priority: see accountPriority)
  [T in JobType]: { jobId: string; jobType: T; sourceUrl: string; params: JobParams<T>; accountId?: string; plan?: PlanName; jobsAhead?: number };
}[JobType];

/** One output file of a completed job, as the job row records it. */
export interface OutputFileEntry {
  /** Its name in the job's folder, also the last part of its link. */
  name: string;
  content_type: string;
  /** Bytes; null when it could not be read at completion. */
  size: number | null;
}

export interface JobEnd {
  jobId: string;
  status: 'completed' | 'failed';
}

/** The error_message of a job whose workflow was cancelled, by the client or an operator. */
export const CANCELLED_MESSAGE = 'cancelled by the client';


/** The Temporal workflow id of a job's workflow. */
export const jobWorkflowId = (jobId: string): string => `job-${jobId}`;
