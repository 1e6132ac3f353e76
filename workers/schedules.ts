// Housekeeping as Temporal Schedules: one runner however many processes there are, visible (and
// pausable) in the Temporal UI. Created, or brought up to date, by every process that runs the
// control workers; creating an existing schedule updates it instead.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import type { Duration, Workflow } from '@temporalio/common';
import type { Config } from '../lib/config';
import type { reconcileJobsWorkflow, sweepStorageWorkflow } from '../workflows';

interface ScheduleDef<W extends Workflow> {
  id: string;
  every: Duration;
  action: ScheduleOptionsStartWorkflowAction<W>;
}

export function scheduleDefinitions(config: Pick<Config, 'reconcileIntervalSeconds' | 'reconcileAfterSeconds'>) {
  const reconcile: ScheduleDef<typeof reconcileJobsWorkflow> = {
    id: 'mediasvc-reconcile-jobs',
    every: `${config.reconcileIntervalSeconds} seconds`,
    action: { type: 'startWorkflow', workflowType: 'reconcileJobsWorkflow', taskQueue: 'control', args: [{ olderThanSeconds: config.reconcileAfterSeconds }] },
  };
  const sweep: ScheduleDef<typeof sweepStorageWorkflow> = {
    id: 'mediasvc-sweep-storage',
    every: '5 minutes',
    action: { type: 'startWorkflow', workflowType: 'sweepStorageWorkflow', taskQueue: 'control', args: [] },
  };
  return { reconcile, sweep };
}

/** Creates or updates every schedule, then runs the reconciler once at once (a restart may have stranded jobs). */
export async function ensureSchedules(client: Client, config: Pick<Config, 'reconcileIntervalSeconds' | 'reconcileAfterSeconds'>): Promise<void> {
  const defs = scheduleDefinitions(config);
  for (const def of Object.values(defs) as ScheduleDef<Workflow>[]) {
    const spec = { intervals: [{ every: def.every }] };
    const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' as Duration };
    try {
      await client.schedule.create({ scheduleId: def.id, spec, action: def.action, policies });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await client.schedule.getHandle(def.id).update((prev) => ({ ...prev, spec, action: def.action, policies }));
    }
  }
  await client.schedule.getHandle(defs.reconcile.id).trigger(ScheduleOverlapPolicy.SKIP);
}
