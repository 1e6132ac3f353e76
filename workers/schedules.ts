// Housekeeping as Temporal Schedules: one runner however many processes there are, visible (and
// pausable) in the Temporal UI. Created, or brought up to date, by every process that runs the
// control workers; creating an existing schedule updates it instead.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptionsStartWorkflowAction, type ScheduleSpec } from '@temporalio/client';
import type { Duration, Workflow } from '@temporalio/common';
import type { Config } from '../lib/config';
import type { grantMonthlyCreditsWorkflow, reconcileJobsWorkflow, sweepStorageWorkflow } from '../workflows';

interface ScheduleDef<W extends Workflow> {
  id: string;
  spec: ScheduleSpec;
  /** How late a missed run (the cluster was down) may still start. */
  catchupWindow: Duration;
  action: ScheduleOptionsStartWorkflowAction<W>;
}

export function scheduleDefinitions(config: Pick<Config, 'reconcileIntervalSeconds' | 'reconcileAfterSeconds'>) {
  const reconcile: ScheduleDef<typeof reconcileJobsWorkflow> = {
    id: 'mediasvc-reconcile-jobs',
    spec: { intervals: [{ every: `${config.reconcileIntervalSeconds} seconds` }] },
    catchupWindow: '1 minute',
    action: { type: 'startWorkflow', workflowType: 'reconcileJobsWorkflow', taskQueue: 'control', args: [{ olderThanSeconds: config.reconcileAfterSeconds }] },
  };
  const sweep: ScheduleDef<typeof sweepStorageWorkflow> = {
    id: 'mediasvc-sweep-storage',
    spec: { intervals: [{ every: '5 minutes' }] },
    catchupWindow: '1 minute',
    action: { type: 'startWorkflow', workflowType: 'sweepStorageWorkflow', taskQueue: 'control', args: [] },
  };
  const topUp: ScheduleDef<typeof grantMonthlyCreditsWorkflow> = {
    id: 'mediasvc-monthly-credits',
    spec: { calendars: [{ dayOfMonth: 1, hour: 0, minute: 0 }], timezone: 'UTC' },
    catchupWindow: '1 day',
    action: { type: 'startWorkflow', workflowType: 'grantMonthlyCreditsWorkflow', taskQueue: 'control', args: [] },
  };
  return { reconcile, sweep, topUp };
}

/** Creates or updates every schedule, then runs the reconciler once at once (a restart may have stranded jobs). */
export async function ensureSchedules(client: Client, config: Pick<Config, 'reconcileIntervalSeconds' | 'reconcileAfterSeconds'>): Promise<void> {
  const defs = scheduleDefinitions(config);
  for (const def of Object.values(defs) as ScheduleDef<Workflow>[]) {
    const { spec } = def;
    const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: def.catchupWindow };
    try {
      await client.schedule.create({ scheduleId: def.id, spec, action: def.action, policies });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await client.schedule.getHandle(def.id).update((prev) => ({ ...prev, spec, action: def.action, policies }));
    }
  }
  await client.schedule.getHandle(defs.reconcile.id).trigger(ScheduleOverlapPolicy.SKIP);
}
