// What one account can have in flight on each queue (a plan limit) against the queue's run permits and
// task slots, checked when workers start: a bigger plan added to the table, or a smaller
// QUEUE_CONCURRENCY, never silently lets one account take every slot of a queue.
import { PLANS } from '../lib/plans';
import type { TaskQueue } from '../lib/queues';
import { reservedPermits, slotsFor } from './account-share.interceptor';
import { QUEUE_TABLE, type QueueSpec } from './queues';

/**
 * The most task slots a worker takes on one queue. Steps waiting there for a permit run down their
 * timeouts (an info read has 45 s), so a plan limit that needs more is a mistake in the table.
 */
export const MAX_TASK_SLOTS = 512;

export interface PlanLimits {
  maxRunningJobs: number;
  maxInfoReads: number;
}

/** How one worker of a queue shares its capacity: permits by account (or none), and the task slots it takes. */
export interface QueueShare {
  capacity: number;
  /** Permits always another account's; null where the queue is not shared by account. */
  reserve: number | null;
  slots: number;
}

/** The plan with the largest `limit`, and its name. */
function largestPlan(plans: Record<string, PlanLimits>, limit: keyof PlanLimits): [name: string, plan: PlanLimits] {
  return Object.entries(plans).reduce((a, b) => (b[1][limit] > a[1][limit] ? b : a));
}

/** A queue's share on one worker, for `capacity` permits (QUEUE_CONCURRENCY or the table's default). */
export function queueShare(spec: QueueSpec, capacity: number, plans: Record<string, PlanLimits> = PLANS): QueueShare {
  const shared = spec.sharedByAccount;
  if (!shared) return { capacity, reserve: null, slots: capacity };
  return { capacity, reserve: reservedPermits(capacity), slots: slotsFor(capacity, largestPlan(plans, shared.inFlightPerAccount)[1][shared.inFlightPerAccount]) };
}

/** Why the plan table and the queues' capacities cannot share every queue between accounts; empty when they can. */
export function planShareProblems(capacities: Partial<Record<TaskQueue, number>>, plans: Record<string, PlanLimits> = PLANS): string[] {
  const problems: string[] = [];
  for (const [name, plan] of Object.entries(plans)) {
    for (const limit of ['maxRunningJobs', 'maxInfoReads'] as const) {
      if (!Number.isInteger(plan[limit]) || plan[limit] < 1) problems.push(`the ${name} plan's ${limit} is ${plan[limit]}: it must be a whole number, at least 1`);
    }
  }
  if (problems.length) return problems;
  const runningJobs = largestPlan(plans, 'maxRunningJobs');
  for (const [queue, spec] of Object.entries(QUEUE_TABLE) as [TaskQueue, QueueSpec][]) {
    const capacity = capacities[queue] ?? spec.defaultConcurrency;
    const share = queueShare(spec, capacity, plans);
    if (spec.sharedByAccount) {
      const limit = spec.sharedByAccount.inFlightPerAccount;
      if (capacity < 2) problems.push(`${queue} runs ${capacity} step at once (QUEUE_CONCURRENCY): one account would hold it; give it at least 2, so one is always another account's`);
      const [planName, plan] = largestPlan(plans, limit);
      if (share.slots > MAX_TASK_SLOTS) problems.push(`the ${planName} plan's ${limit} (${plan[limit]}) needs ${share.slots} task slots on each ${queue} worker, more than ${MAX_TASK_SLOTS}: its steps would wait past their timeouts; lower it, or run more workers with a smaller plan limit`);
    } else if (spec.stepsOfRunningJobs && share.slots <= runningJobs[1].maxRunningJobs) {
      problems.push(`${queue} runs ${share.slots} steps at once, no more than the ${runningJobs[0]} plan's running jobs (${runningJobs[1].maxRunningJobs}): one account could hold every slot; give it more (QUEUE_CONCURRENCY)`);
    }
  }
  return problems;
}

/** Refuses to start workers whose queues one account could fill. */
export function assertPlanShares(capacities: Partial<Record<TaskQueue, number>>): void {
  const problems = planShareProblems(capacities);
  if (problems.length) throw new Error(`the plan table and the queues' capacities cannot be shared between accounts; refusing to start:\n- ${problems.join('\n- ')}`);
}
