import { clipProblem } from '../../lib/download-plan';
import { JobFailure, type ToolName } from '../../lib/job-failure';

/** How an engine classifies a failure: the first three are the user's (no retry, refund), `refused` the platform's turning the service away, `failed` may be transient. */
export type FailureKind = 'unsupported' | 'unavailable' | 'rejected' | 'refused' | 'failed';

/** Fails the job (not retried, refunded) when a clip range lies past the end of a source of known duration. */
export function assertClipWithin(clipStart: number | null | undefined, clipEnd: number | null | undefined, duration: number | null): void {
  if (duration === null) return;
  const problem = clipProblem(clipStart ?? null, clipEnd ?? null, duration);
  if (problem) throw JobFailure.user('rejected', problem);
}

/** The job failure for an engine's classified error: the user's, or `tool`'s failure that may pass. */
export function classifiedFailure(kind: FailureKind, message: string, tool: ToolName): JobFailure {
  if (kind === 'refused') return JobFailure.refused(message);
  return kind === 'failed' ? JobFailure.tool(tool, message) : JobFailure.user(kind, message);
}
