// The floor of a job's fixed cost: a workflow that runs one no-op activity, on the same server as the product's jobs.
import { proxyActivities } from '@temporalio/workflow';

export const FLOOR_QUEUE = 'bench-floor';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ taskQueue: FLOOR_QUEUE, startToCloseTimeout: '1 minute', retry: { maximumAttempts: 1 } });

export async function floorWorkflow(): Promise<void> {
  await noop();
}
