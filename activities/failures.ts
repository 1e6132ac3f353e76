import { ApplicationFailure } from '@temporalio/activity';
import { clipProblem } from '../lib/download-plan';
import { FAILURE_TYPES } from '../lib/jobs';

/** How an engine classifies a failure: the first three are the user's (no retry, refund), `failed` may be transient. */
export type FailureKind = 'unsupported' | 'unavailable' | 'rejected' | 'failed';

/** Fails the job (not retried, refunded) when a clip range lies past the end of a source of known duration. */
export function assertClipWithin(clipStart: number | null | undefined, clipEnd: number | null | undefined, duration: number | null): void {
  if (duration === null) return;
  const problem = clipProblem(clipStart ?? null, clipEnd ?? null, duration);
  if (problem) throw ApplicationFailure.nonRetryable(problem, FAILURE_TYPES.rejected);
}

/** The activity failure for an engine's classified error; `retryType` names the retryable ones. */
export function classifiedFailure(kind: FailureKind, message: string, retryType: string): ApplicationFailure {
  if (kind === 'failed') return ApplicationFailure.retryable(message, retryType);
  return ApplicationFailure.nonRetryable(message, FAILURE_TYPES[kind]);
}
