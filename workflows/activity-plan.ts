// Which shared activities workflows call on which queue. Pure data: the workflow bundle proxies
// these and the operations' own (the registry's), and a worker refuses to start when its queue does
// not register every name listed for it (workers/workers.ts).
//
// Their types are declared from above, by declaration merging, so that this file imports nothing
// above lib/: the queue table (workers/queues.ts) fills in QueueActivityTypes and the registry
// (operations/registry.ts) OperationActivityTypes. Both import what the workflows are built of (the
// steps, the runners); were the workflows to import them back, even as types, imports would run in a circle.
import type { TaskQueue } from '../lib/queues';

/** The activities the workers of each queue register, as workflows see them: declared by the queue table (workers/queues.ts). */
export interface QueueActivityTypes {}

/** The operations' own activities on each queue (their activities.ts): declared by the registry (operations/registry.ts). */
export interface OperationActivityTypes {}

type QueueActivities<Q extends TaskQueue> = QueueActivityTypes[Q];
type Plan = { [Q in TaskQueue]: readonly (keyof QueueActivities<Q> & string)[] };

export const ACTIVITY_PLAN = {
  control: ['markProcessing', 'claimRunningSlot', 'jobsDueASlot', 'completeJob', 'failJob', 'planJobEvent', 'attemptDelivery', 'recordLostAttempt', 'deliveryTargetActive', 'startStrandedJobs', 'sweepExpiredOutputs', 'grantMonthlyCredits', 'platformTurn', 'platformRefused', 'platformWorked', 'storeBatchItems', 'failBatchExpansion', 'startBatchItems', 'cancelBatchItems', 'finishBatch', 'planBatchEvent', 'beginSubscriptionCheck', 'recordSubscriptionCheck', 'subscriptionCheckFailed', 'planSubscriptionEvent'],
  'media-info': ['readInfo', 'expandBatchSource'],
  'media-fetch': ['readInfo', 'probeSource', 'downloadSource', 'fetchSource', 'resolveSource', 'fetchTextSource', 'updateYtdlp'],
  // only operations' own steps run here (operations/<name>/activities.ts)
  'media-process': [],
  // recognition, shared by transcribe and translate, and the subtitle tracks of downloads; their own steps are theirs (operations/<name>/activities.ts)
  'media-speech': ['recognizeSpeech', 'subtitleTracks'],
  webhooks: ['attemptDelivery', 'recordLostAttempt', 'deliveryTargetActive'],
} as const satisfies Plan;

/** What workflows may call on a queue: its planned shared steps and the operations' own. */
export type PlannedActivities<Q extends TaskQueue> = Pick<QueueActivities<Q>, Extract<(typeof ACTIVITY_PLAN)[Q][number], keyof QueueActivities<Q>>> & OperationActivityTypes[Q];

/** Names a queue's workers must register but do not; empty when the queue is complete. */
export function missingActivities(queue: TaskQueue, registered: Record<string, unknown>): string[] {
  return ACTIVITY_PLAN[queue].filter((name) => typeof registered[name] !== 'function');
}
