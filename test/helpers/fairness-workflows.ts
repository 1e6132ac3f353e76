// A one-activity workflow whose activity waits on a queue of its own: enough to see in which order that queue hands out work.
import { proxyActivities } from '@temporalio/workflow';

const { work } = proxyActivities<{ work(tag: string): Promise<string> }>({ taskQueue: 'fairness-activities', startToCloseTimeout: '1 minute', retry: { maximumAttempts: 1 } });

export async function oneStep(tag: string): Promise<string> {
  return work(tag);
}
