import path from 'node:path';
import { MikroORM } from '@mikro-orm/core';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createControlActivities } from '../activities/control.activities';
import { createFetchActivities } from '../activities/fetch.activities';
import { createProcessActivities } from '../activities/process.activities';
import { createFfmpegEngine } from '../engines/ffmpeg.engine';
import { createYtDlpEngine } from '../engines/ytdlp.engine';
import type { Config } from '../lib/config';
import { TASK_QUEUES, type TaskQueue } from '../lib/job.types';
import { Storage } from '../lib/storage';

let bundle: Promise<WorkflowBundleWithSourceMap> | null = null;

/** The workflow bundle, built once per process. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: quietBundlerLogger });
  return bundle;
}

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => console.warn(m),
  error: (m: string) => console.error(m),
};

export interface WorkerDeps {
  config: Config;
  connection: NativeConnection;
  /** Needed by the control queue only. */
  orm?: MikroORM;
}

/** Creates one Temporal worker per requested queue, each with that queue's activities. */
export async function createWorkers(queues: TaskQueue[], deps: WorkerDeps): Promise<Worker[]> {
  const { config, connection } = deps;
  const storage = new Storage(config);
  const common = { connection, namespace: config.temporalNamespace };
  const workers: Worker[] = [];
  for (const queue of queues) {
    if (queue === TASK_QUEUES.control) {
      if (!deps.orm) throw new Error('the control queue needs the database');
      workers.push(
        await Worker.create({
          ...common,
          taskQueue: queue,
          workflowBundle: await workflowBundle(),
          activities: createControlActivities({ orm: deps.orm, storage, config }),
        }),
      );
    } else if (queue === TASK_QUEUES.fetch) {
      const ytdlp = createYtDlpEngine({ binary: config.ytdlpPath, ffmpegLocation: ffmpegDir(config.ffmpegPath) });
      const ffmpeg = createFfmpegEngine(config);
      workers.push(
        await Worker.create({ ...common, taskQueue: queue, activities: createFetchActivities({ ytdlp, ffmpeg, storage, config }), maxConcurrentActivityTaskExecutions: 4 }),
      );
    } else if (queue === TASK_QUEUES.process) {
      const ffmpeg = createFfmpegEngine(config);
      // ffmpeg is CPU-bound: one job per core is the useful concurrency.
      workers.push(
        await Worker.create({ ...common, taskQueue: queue, activities: createProcessActivities({ ffmpeg, storage }), maxConcurrentActivityTaskExecutions: 2 }),
      );
    } else if (queue === TASK_QUEUES.speech) {
      // No speech activities are registered yet (transcribe/translate come with the speech engine).
      console.warn('media-speech: no activities to serve yet; skipping this queue');
    }
  }
  return workers;
}

function ffmpegDir(ffmpegPath: string): string | undefined {
  return ffmpegPath.includes('/') ? path.dirname(ffmpegPath) : undefined;
}

/** Runs the workers until they are shut down; one failing brings the others down too. */
export async function runWorkers(workers: Worker[]): Promise<void> {
  try {
    await Promise.all(workers.map((w) => w.run()));
  } finally {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  }
}
