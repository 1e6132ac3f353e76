import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type { Storage } from '../engines/storage';

/**
 * Where a job's steps share no disk (STORAGE=s3), a step's scratch folder on this machine goes when
 * the step ends, however it ends: what the next step needs was passed on through storage, and the
 * job's end is seen by another machine, which cannot clean this one.
 */
export class StepScratchInterceptor implements ActivityInboundCallsInterceptor {
  constructor(private readonly storage: Storage) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } finally {
      const jobId = (input.args[0] as { jobId?: unknown } | undefined)?.jobId;
      if (typeof jobId === 'string') await this.storage.removeWorkDir(jobId).catch(() => undefined);
    }
  }
}
