import { ApplicationFailure } from '@temporalio/activity';
import { FAILURE_TYPES } from '../lib/jobs';

/** How an engine classifies a failure: the first three are the user's (no retry, refund), `failed` may be transient. */
export type FailureKind = 'unsupported' | 'unavailable' | 'rejected' | 'failed';

/** The activity failure for an engine's classified error; `retryType` names the retryable ones. */
export function classifiedFailure(kind: FailureKind, message: string, retryType: string): ApplicationFailure {
  if (kind === 'failed') return ApplicationFailure.retryable(message, retryType);
  return ApplicationFailure.nonRetryable(message, FAILURE_TYPES[kind]);
}
