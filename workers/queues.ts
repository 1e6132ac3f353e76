// The queue table: every task queue, declared once with its activities and default concurrency.
// Workers are built from it (workers/workers.ts); workflows proxy activities by the types it gives.
// A queue's activities are its shared steps (activities/) and the operations' own (the registry's).
import os from 'node:os';
import type { MikroORM } from '@mikro-orm/core';
import { createJobLifecycleActivities } from '../jobs/lifecycle.activities';
import { createMaintenanceActivities } from '../activities/maintenance.activities';
import { createSourceActivities } from '../activities/source.activities';
import { createSpeechActivities } from '../activities/speech.activities';
import { createWebhookActivities } from '../webhooks/activities';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import { createSpeechServices } from '../engines/speech/services';
import { createWhisperEngine } from '../engines/speech/whisper.engine';
import type { Storage } from '../engines/storage';
import { createYtDlpEngine, ytdlpOptionsOf } from '../engines/ytdlp/ytdlp.engine';
import type { Config } from '../lib/config';
import type { MediaJobInput } from '../jobs/types';
import type { TaskQueue } from '../lib/queues';
import { operationActivities } from '../operations/registry';
import { egressOf } from '../operations/step-deps';

export interface QueueDeps {
  config: Config;
  storage: Storage;
  /** The database; only queues with needsDatabase get it. */
  orm?: MikroORM;
  /** The process's egress proxy; only queues with needsEgress get it. */
  egress?: EgressProxy;
  /** Starts a job's workflow (the reconciler's), through the process's Temporal client. */
  startJob?: (input: MediaJobInput) => Promise<boolean>;
}

export interface QueueSpec {
  /** What runs there, for `--help` and the README. */
  description: string;
  /** The job, info and webhook workflows run on this queue's workers. */
  runsWorkflows: boolean;
  needsDatabase: boolean;
  /** Tools on this queue fetch users' URLs: they connect only through the egress proxy. */
  needsEgress: boolean;
  /** A client waits on this queue's work: its tools keep normal CPU priority, while jobs' tools yield (JOB_TOOL_NICENESS). */
  interactive?: true;
  /** Activities run at once per worker unless QUEUE_CONCURRENCY says otherwise. */
  defaultConcurrency: number;
  /** Its steps use jobs' work folders (downloads, scratch files). */
  usesWorkDir?: true;
  /**
   * Its run permits (the concurrency) are shared by account, one always left for another account, and
   * the worker takes more tasks than it runs, so one account's steps never hold every slot.
   */
  sharedByAccount?: true;
  activities(deps: QueueDeps): Record<string, (...args: never[]) => Promise<unknown>>;
}

function database(deps: QueueDeps): MikroORM {
  if (!deps.orm) throw new Error('this queue needs the database');
  return deps.orm;
}

export const QUEUE_TABLE = {
  control: {
    description: 'workflows; job state, credits and refunds, webhook deliveries, housekeeping (database, outbound webhook HTTP)',
    runsWorkflows: true,
    needsDatabase: true,
    needsEgress: false,
    defaultConcurrency: 50,
    activities: (d: QueueDeps) => ({
      ...createJobLifecycleActivities({ orm: database(d), storage: d.storage, config: d.config }),
      ...createWebhookActivities({ orm: database(d), config: d.config }),
      ...createMaintenanceActivities({ orm: database(d), storage: d.storage, startJob: d.startJob }),
    }),
  },
  webhooks: {
    // deliveries and their retries wait on other people's servers: slots of their own, never a job's
    description: 'webhook deliveries: their workflows, each attempt (outbound HTTP) and its bookkeeping (database)',
    runsWorkflows: true,
    needsDatabase: true,
    needsEgress: false,
    defaultConcurrency: 20,
    activities: (d: QueueDeps) => {
      const webhooks = createWebhookActivities({ orm: database(d), config: d.config });
      return { attemptDelivery: webhooks.attemptDelivery, recordLostAttempt: webhooks.recordLostAttempt, deliveryTargetActive: webhooks.deliveryTargetActive };
    },
  },
  'media-info': {
    // info reads have capacity of their own, so a backlog of downloads never delays them
    description: 'GET /v1/info: its short workflows and metadata reads (yt-dlp, ffprobe), apart from jobs',
    // its own workflow tasks too: a burst of job workflows on control never delays a waiting client
    runsWorkflows: true,
    interactive: true,
    needsDatabase: false,
    needsEgress: true,
    defaultConcurrency: 4,
    activities: (deps: QueueDeps) => {
      const { config, storage } = deps;
      const source = createSourceActivities({ ytdlp: createYtDlpEngine(ytdlpOptionsOf(config)), ffmpeg: createFfmpegEngine(config), storage, egress: egressOf(deps), config });
      return { readInfo: source.readInfo };
    },
  },
  'media-fetch': {
    description: 'network-bound: metadata, downloads and comments (yt-dlp, direct HTTP, PeerTube)',
    usesWorkDir: true,
    runsWorkflows: false,
    needsDatabase: false,
    needsEgress: true,
    // downloads wait on the network; more slots than one account's running jobs (business: 16), so
    // one account's burst of slow downloads never holds every slot while other accounts' jobs wait
    defaultConcurrency: 20,
    activities: (deps: QueueDeps) => {
      const { config, storage } = deps;
      const egress = egressOf(deps);
      const ffmpeg = createFfmpegEngine(config);
      const shared = createSourceActivities({ ytdlp: createYtDlpEngine(ytdlpOptionsOf(config)), ffmpeg, storage, egress, config });
      return { ...shared, ...operationActivities('media-fetch', { config, storage, ffmpeg, egress }, Object.keys(shared)) };
    },
  },
  'media-process': {
    description: 'CPU-bound: download finishing and editing, previews, fingerprints (ffmpeg, sharp); seeks in source URLs',
    usesWorkDir: true,
    runsWorkflows: false,
    needsDatabase: false,
    // previews and fingerprints seek in the source URL (range reads) rather than download it
    needsEgress: true,
    // ffmpeg is CPU-bound, so a step per core, plus four: seek reads wait on the network, and when one
    // account's ordinary jobs (up to its plan's running slots) reach this queue together, fairness hands
    // out freed slots between them and another account's steps by weight; spare slots let those steps
    // start at once, and the kernel shares the cores (a batch job's tools run niced)
    defaultConcurrency: os.availableParallelism() + 4,
    // one account's running jobs reaching this queue together took every slot, and another account's
    // preview waited seconds for one on a slower machine: the last permit is always another account's
    sharedByAccount: true,
    activities: (deps: QueueDeps) => {
      const { config, storage } = deps;
      // every step here is an operation's own (operations/<name>/activities.ts)
      return operationActivities('media-process', { config, storage, ffmpeg: createFfmpegEngine(config), egress: egressOf(deps) });
    },
  },
  'media-speech': {
    // faster-whisper uses every core for one job: one job at a time per speech worker.
    description: 'CPU-bound: speech recognition and translation (faster-whisper, Apertium)',
    usesWorkDir: true,
    runsWorkflows: false,
    needsDatabase: false,
    needsEgress: false,
    defaultConcurrency: 1,
    activities: ({ config, storage }: QueueDeps) => {
      const { registry, translator } = createSpeechServices(config);
      // one warm faster-whisper process per job this worker runs at once
      const whisper = createWhisperEngine({ python: config.whisperPython, processes: config.queueConcurrency['media-speech'] ?? 1 });
      const ffmpeg = createFfmpegEngine(config);
      const shared = createSpeechActivities({ whisper, ffmpeg, registry, translator, storage, config });
      return { ...shared, ...operationActivities('media-speech', { config, storage, ffmpeg }, Object.keys(shared)) };
    },
  },
} satisfies Record<TaskQueue, QueueSpec>;

/** The activities registered on a queue, as workflows see them. */
export type QueueActivities<Q extends TaskQueue> = ReturnType<(typeof QUEUE_TABLE)[Q]['activities']>;
