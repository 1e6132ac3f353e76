import type { MikroORM } from '@mikro-orm/core';
import { NativeConnection, Worker } from '@temporalio/worker';
import sharp from 'sharp';
import { processEgressProxy } from '../engines/egress/egress-proxy';
import type { Storage } from '../engines/storage';
import type { Config } from '../lib/config';
import type { MediaJobInput } from '../jobs/types';
import type { SlowAnswers } from '../webhooks/activities';
import type { TaskQueue } from '../lib/queues';
import { assertRegistrySound } from '../operations/registry';
import { missingActivities } from '../workflows/activity-plan';
import { AccountPermits, AccountShareInterceptor } from './account-share.interceptor';
import { ActivityOutcomeInterceptor } from './activity-outcome.interceptor';
import { DiskSpaceInterceptor } from './disk-space.interceptor';
import { assertPlanShares, queueShare } from './plan-shares';
import { StepScratchInterceptor } from './step-scratch.interceptor';
import { QUEUE_TABLE, type QueueDeps, type QueueSpec } from './queues';
import { workflowBundle } from './workflow-bundle';
import { PlatformGate, usePlatformGate } from '../engines/egress/platform-gate';
import { sourceRoutes, useSourceRoutes } from '../engines/egress/upstream-proxy';
import { log } from '../lib/logger';
import { redactedProxy } from '../lib/source-sites';

export interface WorkerDeps {
  config: Config;
  connection: NativeConnection;
  /** Opened (and checked) by the caller before it connects to Temporal. */
  storage: Storage;
  /** Needed by queues whose table entry says needsDatabase. */
  orm?: MikroORM;
  /** Starts a job's workflow, for the reconciler on the control queue. */
  startJob?: (input: MediaJobInput) => Promise<boolean>;
  /** Cancels a job through its workflow (a batch's cancel). */
  cancelJob?: (input: MediaJobInput) => Promise<boolean>;
  /** Pauses a Schedule (a subscription that keeps failing). */
  pauseSchedule?: (scheduleId: string, note: string) => Promise<void>;
  /** Where the webhooks queue's attempts await slow answers off their slot (the process's client). */
  slowAnswers?: SlowAnswers;
}

/** The activities of a queue, refused when a name the workflows call on it is not registered. */
export function queueActivities(queue: TaskQueue, deps: QueueDeps): Record<string, unknown> {
  const spec = QUEUE_TABLE[queue];
  if (spec.needsDatabase && !deps.orm) throw new Error(`the ${queue} queue needs the database`);
  if (spec.needsEgress && !deps.egress) throw new Error(`the ${queue} queue needs the egress proxy`);
  const activities = spec.activities(deps);
  const missing = missingActivities(queue, activities);
  if (missing.length) throw new Error(`the ${queue} worker does not register ${missing.join(', ')}, which workflows call on it; refusing to start`);
  return activities;
}

/**
 * Workflow tasks a worker takes at once. Its workflows run on one thread, so a few keep it busy; the
 * SDK's 40 queued inside the worker first come, first served (a burst's tasks ahead of another
 * account's), where the server would have handed them out by priority and account.
 */
const WORKFLOW_TASK_SLOTS = 4;

/** Creates one Temporal worker per requested queue, from the queue table. */
export async function createWorkers(queues: TaskQueue[], deps: WorkerDeps): Promise<Worker[]> {
  const { config, connection, storage } = deps;
  assertRegistrySound();
  assertPlanShares(config.queueConcurrency);
  // libvips keeps up to 50 MB of recent operations for reuse, and a step reads each image once
  sharp.cache(false);
  const routes = sourceRoutes(config.sourceProxy);
  useSourceRoutes(routes);
  const proxies = Object.entries(config.sourceProxy.bySite).map(([site, href]) => `${site}: ${href ? redactedProxy(href) : 'direct'}`);
  if (config.sourceProxy.default || proxies.length) log.info({ default: config.sourceProxy.default && redactedProxy(config.sourceProxy.default), sites: proxies }, 'source traffic goes through the configured proxies');
  usePlatformGate(new PlatformGate(config.platformConcurrency));
  const egress = queues.some((q) => QUEUE_TABLE[q].needsEgress) ? await processEgressProxy({ allowPrivate: config.allowPrivateNetwork, routes }) : undefined;
  const workers: Worker[] = [];
  for (const queue of queues) {
    const spec: QueueSpec = QUEUE_TABLE[queue];
    const share = queueShare(spec, config.queueConcurrency[queue] ?? spec.defaultConcurrency);
    const permits = share.reserve === null ? null : new AccountPermits(share.capacity, share.reserve);
    const niceness = spec.interactive ? { ordinary: 0, batch: 0 } : { ordinary: config.jobToolNiceness, batch: config.batchToolNiceness };
    workers.push(
      await Worker.create({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: queue,
        activities: queueActivities(queue, { config, storage, orm: deps.orm, egress, startJob: deps.startJob, cancelJob: deps.cancelJob, pauseSchedule: deps.pauseSchedule, slowAnswers: deps.slowAnswers }),
        maxConcurrentActivityTaskExecutions: share.slots,
        // progress and cancellations travel on heartbeats: let them through every second, not every 48 s
        maxHeartbeatThrottleInterval: '1 second',
        defaultHeartbeatThrottleInterval: '1 second',
        interceptors: {
          activity: [
            () => ({ inbound: new ActivityOutcomeInterceptor(niceness) }),
            ...(permits ? [() => ({ inbound: new AccountShareInterceptor(permits, niceness.batch) })] : []),
            ...(spec.usesWorkDir ? [() => ({ inbound: new DiskSpaceInterceptor({ dir: config.dataDir, storage, minFreeBytes: config.minFreeDiskMb * 2 ** 20, fullRetryMs: config.diskFullRetryMs }) })] : []),
            ...(storage.stepsShareNoDisk && spec.usesWorkDir ? [() => ({ inbound: new StepScratchInterceptor(storage) })] : []),
          ],
        },
        ...(spec.runsWorkflows ? { workflowBundle: await workflowBundle(), maxCachedWorkflows: config.workflowCacheSize, maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS } : {}),
      }),
    );
  }
  return workers;
}

/** Runs the workers until they are shut down; one failing brings the others down too. */
export async function runWorkers(workers: Worker[]): Promise<void> {
  try {
    await Promise.all(workers.map((w) => w.run()));
  } finally {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  }
}
