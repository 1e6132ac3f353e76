import path from 'node:path';
import { MikroORM } from '@mikro-orm/core';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createCommentsActivities } from '../activities/comments.activities';
import { createControlActivities } from '../activities/control.activities';
import { createWebhookActivities } from '../activities/webhook.activities';
import { createFetchActivities } from '../activities/fetch.activities';
import { createEditActivities } from '../activities/edit.activities';
import { createPreviewActivities } from '../activities/preview.activities';
import { createProcessActivities } from '../activities/process.activities';
import { createSpeechActivities } from '../activities/speech.activities';
import { createPeerTubeProvider } from '../engines/comments/peertube';
import { createYtDlpCommentsProvider } from '../engines/comments/ytdlp-comments';
import { createFfmpegEngine } from '../engines/ffmpeg.engine';
import { createSpeechServices } from '../engines/speech/services';
import { createWhisperEngine } from '../engines/speech/whisper.engine';
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
          activities: { ...createControlActivities({ orm: deps.orm, storage, config }), ...createWebhookActivities({ orm: deps.orm, config }) },
        }),
      );
    } else if (queue === TASK_QUEUES.fetch) {
      const ytdlp = createYtDlpEngine({ binary: config.ytdlpPath, ffmpegLocation: ffmpegDir(config.ffmpegPath), pluginDirs: config.ytdlpPluginDirs });
      const ffmpeg = createFfmpegEngine(config);
      // Comments: PeerTube instances over their REST API, everything else through yt-dlp.
      const providers = [
        createPeerTubeProvider({ allowPrivateNetwork: config.allowPrivateNetwork }),
        createYtDlpCommentsProvider({ binary: config.ytdlpPath, pluginDirs: config.ytdlpPluginDirs }),
      ];
      const activities = { ...createFetchActivities({ ytdlp, ffmpeg, storage, config }), ...createCommentsActivities({ providers, storage, config }) };
      workers.push(await Worker.create({ ...common, taskQueue: queue, activities, maxConcurrentActivityTaskExecutions: 4 }));
    } else if (queue === TASK_QUEUES.process) {
      const ffmpeg = createFfmpegEngine(config);
      // ffmpeg is CPU-bound: one job per core is the useful concurrency.
      const activities = { ...createProcessActivities({ ffmpeg, storage }), ...createEditActivities({ ffmpeg, storage }), ...createPreviewActivities({ ffmpeg, storage }) };
      workers.push(await Worker.create({ ...common, taskQueue: queue, activities, maxConcurrentActivityTaskExecutions: 2 }));
    } else if (queue === TASK_QUEUES.speech) {
      const ffmpeg = createFfmpegEngine(config);
      const whisper = createWhisperEngine({ python: config.whisperPython });
      const { registry, translator } = createSpeechServices(config);
      // faster-whisper uses every core for one job: one job at a time per speech worker.
      const activities = createSpeechActivities({ whisper, ffmpeg, registry, translator, storage, config });
      workers.push(await Worker.create({ ...common, taskQueue: queue, activities, maxConcurrentActivityTaskExecutions: 1 }));
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
