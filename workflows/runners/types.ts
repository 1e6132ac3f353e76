import type { JobOutput, JobType } from '../../lib/jobs';
import type { JobParams } from '../../lib/operations';
import type { PlanName } from '../../lib/plans';

/** The workflow steps of one operation: from the job's parameters to its output file and result_data. */
export type OperationRunner<T extends JobType> = (job: { jobId: string; params: JobParams<T>; plan?: PlanName }) => Promise<JobOutput>;
