// Housekeeping as Temporal Schedules: one runner however many processes there are, visible (and
// pausable) in the Temporal UI. Created, or brought up to date, by every process that runs the
// control workers; creating an existing schedule updates it instead.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptionsStartWorkflowAction, type ScheduleSpec } from '@temporalio/client';
import type { Duration, Workflow } from '@temporalio/common';
import type { Config } from '../lib/config';
import type { grantMonthlyCreditsWorkflow, reconcileJobsWorkflow, sweepStorageWorkflow, updateYtdlpWorkflow } from '../workflows';

interface ScheduleDef<W extends Workflow> {
  id: string;
  spec: ScheduleSpec;
  /** How late a missed run (the cluster was down) may still start. */
  catchupWindow: Duration;
  action: ScheduleOptionsStartWorkflowAction<W>;
}

/** The opt-in daily yt-dlp update's schedule (YTDLP_AUTO_UPDATE=daily), at 04:17 UTC. */
export const YTDLP_UPDATE_SCHEDULE: ScheduleDef<typeof updateYtdlpWorkflow> = {
  id: 'mediasvc-update-yt-dlp',
  spec: { calendars: [{ hour: 4, minute: 17 }], timezone: 'UTC' },
  catchupWindow: '6 hours',
  action: { type: 'startWorkflow', workflowType: 'updateYtdlpWorkflow', taskQueue: 'control', args: [] },
};

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
export async function ensureSchedules(client: Client, config: Pick<Config, 'reconcileIntervalSeconds' | 'reconcileAfterSeconds' | 'ytdlpAutoUpdate'>): Promise<void> {
  const defs = scheduleDefinitions(config);
  for (const def of Object.values(defs) as ScheduleDef<Workflow>[]) await upsertSchedule(client, def);
  await ensureYtdlpUpdateSchedule(client, config.ytdlpAutoUpdate);
  await client.schedule.getHandle(defs.reconcile.id).trigger(ScheduleOverlapPolicy.SKIP);
}

/** Creates the daily yt-dlp update's schedule when it is asked for, and removes it when it no longer is. */
async function ensureYtdlpUpdateSchedule(client: Client, mode: Config['ytdlpAutoUpdate']): Promise<void> {
  if (mode === 'off') await client.schedule.getHandle(YTDLP_UPDATE_SCHEDULE.id).delete().catch(() => undefined);
  else await upsertSchedule(client, YTDLP_UPDATE_SCHEDULE as ScheduleDef<Workflow>);
}

/** Creates a schedule, or brings an existing one up to date. */
async function upsertSchedule(client: Client, def: ScheduleDef<Workflow>): Promise<void> {
  const { spec } = def;
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: def.catchupWindow };
  try {
    await client.schedule.create({ scheduleId: def.id, spec, action: def.action, policies });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(def.id).update((prev) => ({ ...prev, spec, action: def.action, policies }));
  }
}
