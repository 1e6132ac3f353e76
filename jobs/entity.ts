import { EntitySchema } from '@mikro-orm/core';
import type { StoredFailureKind } from '../lib/job-failure';
import type { JobStatus, JobType, OutputFileEntry } from './types';

export class Job {
  id!: string;
  accountId!: string;
  jobType!: JobType;
  status: JobStatus = 'pending';
  sourceUrl!: string;
  parameters!: Record<string, unknown>;
  creditsCharged!: number;
  progress: number | null = 0;
  resultData: Record<string, unknown> | null = null;
  /** Path of the output file relative to the files directory. */
  outputFile: string | null = null;
  /** Every output file (the first is outputFile's), as recorded when the job completed; null on jobs that completed before. */
  outputFiles: OutputFileEntry[] | null = null;
  errorMessage: string | null = null;
  /** Why it failed, as a kind (lib/job-failure.ts); null on jobs that failed before it was recorded. */
  failureKind: StoredFailureKind | null = null;
  webhookUrl: string | null = null;
  /** Set while the job waits, pending, for a platform that refuses the service (its circuit breaker is open): it holds none of its account's running slots. */
  waitingPlatform: string | null = null;
  /** The batch whose item this job is; null for a job created on its own. */
  batchId: string | null = null;
  createdAt: Date = new Date();
  startedAt: Date | null = null;
  completedAt: Date | null = null;
  expiresAt: Date | null = null;
}

export const JobEntitySchema = new EntitySchema<Job>({
  class: Job,
  tableName: 'jobs',
  indexes: [{ properties: ['accountId', 'createdAt', 'id'] }, { properties: ['accountId', 'status', 'createdAt'] }, { properties: ['batchId'] }],
  properties: {
    id: { type: 'string', primary: true, length: 36 },
    accountId: { type: 'string', length: 36 },
    jobType: { type: 'string', length: 16 },
    status: { type: 'string', length: 16 },
    sourceUrl: { type: 'text' },
    parameters: { type: 'json' },
    creditsCharged: { type: 'integer' },
    progress: { type: 'integer', nullable: true },
    resultData: { type: 'json', nullable: true },
    outputFile: { type: 'text', nullable: true },
    outputFiles: { type: 'json', nullable: true },
    errorMessage: { type: 'text', nullable: true },
    failureKind: { type: 'string', length: 16, nullable: true },
    webhookUrl: { type: 'text', nullable: true },
    waitingPlatform: { type: 'string', length: 253, nullable: true },
    batchId: { type: 'string', length: 36, nullable: true },
    createdAt: { type: 'datetime', length: 3 },
    startedAt: { type: 'datetime', nullable: true },
    completedAt: { type: 'datetime', nullable: true },
    expiresAt: { type: 'datetime', nullable: true },
  },
});
