// The workflow half of the operation registry: a job runs its operation's runner.
import type { MediaJobInput } from '../jobs/types';
import type { JobOutput } from '../lib/job-reports';
import type { OperationRunner } from '../operations/define';
import { OPERATIONS } from '../operations/registry';

/** Runs the operation of a job (the type and its parameters travel together in the input). */
export function runOperation(input: MediaJobInput): Promise<JobOutput> {
  const runner = OPERATIONS[input.jobType].runner as OperationRunner<unknown>;
  return runner({ jobId: input.jobId, params: input.params, plan: input.plan });
}
