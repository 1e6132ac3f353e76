// The workflow half of the operation registry (lib/operations): one runner per job type.
import type { JobOutput, JobType, MediaJobInput } from '../../lib/jobs';
import { runComments } from './comments.runner';
import { runDownload } from './download.runner';
import { runFingerprint } from './fingerprint.runner';
import { runPreview } from './preview.runner';
import { runTranscribe } from './transcribe.runner';
import { runTranslate } from './translate.runner';
import type { OperationRunner } from './types';

export const RUNNERS = {
  download: runDownload,
  preview: runPreview,
  transcribe: runTranscribe,
  translate: runTranslate,
  fingerprint: runFingerprint,
  comments: runComments,
} satisfies { [T in JobType]: OperationRunner<T> };

/** Runs the operation of a job (the type and its parameters travel together in the input). */
export function runOperation(input: MediaJobInput): Promise<JobOutput> {
  const runner = RUNNERS[input.jobType] as OperationRunner<JobType>;
  return runner({ jobId: input.jobId, params: input.params, plan: input.plan });
}
