// Which shared activities workflows call on which queue. Pure data: the workflow bundle proxies
// these and the operations' own (the registry's), and a worker refuses to start when its queue does
// not register every name listed for it (workers/workers.ts).
import type { TaskQueue } from '../lib/queues';
import type { QueueActivities } from '../workers/queues';
import type { OperationActivities } from '../operations/registry';

type Plan = { [Q in TaskQueue]: readonly (keyof QueueActivities<Q> & string)[] };

export const ACTIVITY_PLAN = {
  control: ['markProcessing', 'claimRunningSlot', 'jobsDueASlot', 'completeJob', 'failJob', 'planJobEvent', 'attemptDelivery', 'recordLostAttempt', 'deliveryTargetActive', 'startStrandedJobs', 'sweepExpiredOutputs', 'grantMonthlyCredits', 'platformTurn', 'platformRefused', 'platformWorked'],
  'media-info': ['readInfo'],
  'media-fetch': ['readInfo', 'probeSource', 'downloadSource', 'fetchSource', 'resolveSource', 'fetchTextSource', 'updateYtdlp'],
  // only operations' own steps run here (operations/<name>/activities.ts)
  'media-process': [],
  // recognition, shared by transcribe and translate, and the subtitle tracks of downloads; their own steps are theirs (operations/<name>/activities.ts)
  'media-speech': ['recognizeSpeech', 'subtitleTracks'],
  webhooks: ['attemptDelivery', 'recordLostAttempt', 'deliveryTargetActive'],
} as const satisfies Plan;

/** What workflows may call on a queue: its planned shared steps and the operations' own. */
export type PlannedActivities<Q extends TaskQueue> = Pick<QueueActivities<Q>, Extract<(typeof ACTIVITY_PLAN)[Q][number], keyof QueueActivities<Q>>> & OperationActivities<Q>;

/** Names a queue's workers must register but do not; empty when the queue is complete. */
export function missingActivities(queue: TaskQueue, registered: Record<string, unknown>): string[] {
  return ACTIVITY_PLAN[queue].filter((name) => typeof registered[name] !== 'function');
}
