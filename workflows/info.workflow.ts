import { proxyActivities } from '@temporalio/workflow';
import type { FetchActivities } from '../activities/fetch.activities';
import { FAILURE_TYPES, TASK_QUEUES, type VideoInfo } from '../lib/job.types';

const fetch = proxyActivities<FetchActivities>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '45 seconds',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 2, nonRetryableErrorTypes: Object.values(FAILURE_TYPES) },
});

/** Synchronous metadata read: the API waits on this short workflow. */
export async function infoWorkflow(url: string): Promise<VideoInfo> {
  return fetch.readInfo(url);
}
