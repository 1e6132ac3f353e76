// The floor of a job's fixed cost: a workflow that runs one no-op activity, on the same server as the product's jobs.
import { condition, proxyActivities } from '@temporalio/workflow';

export const FLOOR_QUEUE = 'bench-floor';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ taskQueue: FLOOR_QUEUE, startToCloseTimeout: '1 minute', retry: { maximumAttempts: 1 } });

export async function floorWorkflow(): Promise<void> {
  await noop();
}

/** The floor of any durable workflow: started, one workflow task, completed. */
export async function emptyWorkflow(): Promise<void> {
  // nothing: what is left is the start, one workflow task and the completion
}

/**
 * The memory floor's stand-in for a job: runs the no-op activity, then, when `hold`, waits until it
 * is terminated, as the creates row's jobs are (the worker keeps it cached: it is never told).
 */
export async function floorJobWorkflow(hold: boolean): Promise<void> {
  await noop();
  if (hold) await condition(() => false);
}
