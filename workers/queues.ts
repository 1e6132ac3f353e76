// The queue table: every task queue, declared once with its activities and default concurrency.
// Workers are built from it (workers/workers.ts); workflows proxy activities by the types it gives.
// A queue's activities are its shared steps (activities/) and the operations' own (the registry's).
import { createToolUpdateActivities } from '../activities/source/tool-updates';
import { createPlatformActivities } from '../platforms/breaker.activities';
import { createBatchActivities } from '../batches/activities';
import { createExpansionActivities } from '../batches/expansion.activities';
import { createSubscriptionActivities } from '../subscriptions/activities';
import os from 'node:os';
import type { MikroORM } from '@mikro-orm/core';
import { createJobLifecycleActivities } from '../jobs/lifecycle.activities';
import { createMaintenanceActivities } from '../jobs/maintenance.activities';
import { createSourceActivities } from '../activities/source/activities';
import { createRecognitionActivities } from '../activities/speech/recognition';
import { createSubtitleTrackActivities } from '../activities/speech/subtitle-tracks';
import { createWebhookActivities, type SlowAnswers } from '../webhooks/activities';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import { createSpeechServices } from '../engines/speech/services';
import { createConfiguredWhisperEngine, type WhisperEngine } from '../engines/speech/whisper.engine';
import type { ModelRegistry } from '../engines/speech/model-registry';
import { log } from '../lib/logger';
import type { ModelSize } from '../lib/media-vocabulary';
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
  /** Cancels a job through its workflow (a batch's cancel), through the process's Temporal client. */
  cancelJob?: (input: MediaJobInput) => Promise<boolean>;
  /** Pauses a Schedule (a subscription that keeps failing), through the process's Temporal client. */
  pauseSchedule?: (scheduleId: string, note: string) => Promise<void>;
  /** Where webhook attempts await a slow endpoint's answer off their slot; without it they hold the slot. */
  slowAnswers?: SlowAnswers;
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
   * Its run permits (the concurrency) are shared by account: a quarter of them (at least one) are
   * always another account's, and the worker takes as many more tasks as one account can have in
   * flight here (that plan limit, the largest in the table), so one account's waiting steps never
   * hold every slot while another account's step waits for one.
   */
  sharedByAccount?: { inFlightPerAccount: 'maxRunningJobs' | 'maxInfoReads' };
  /** Not shared by account, but its steps belong to running jobs: it must have more slots than a plan's running jobs. */
  stepsOfRunningJobs?: true;
  activities(deps: QueueDeps): Record<string, (...args: never[]) => Promise<unknown>>;
}

function database(deps: QueueDeps): MikroORM {
  if (!deps.orm) throw new Error('this queue needs the database');
  return deps.orm;
}

/** Speech steps at once per worker (and warm faster-whisper processes). */
const SPEECH_STEPS_AT_ONCE = 2;

export const QUEUE_TABLE = {
  control: {
    description: 'workflows; job state, credits and refunds, webhook deliveries, housekeeping (database, outbound webhook HTTP)',
    runsWorkflows: true,
    needsDatabase: true,
    needsEgress: false,
    defaultConcurrency: 50,
    // quick database steps: more slots than one account's running jobs, so they never all wait on one account
    stepsOfRunningJobs: true,
    activities: (d: QueueDeps) => ({
      ...createJobLifecycleActivities({ orm: database(d), storage: d.storage, config: d.config }),
      ...createWebhookActivities({ orm: database(d), config: d.config }),
      ...createMaintenanceActivities({ orm: database(d), storage: d.storage, startJob: d.startJob }),
      ...createPlatformActivities({ orm: database(d), config: d.config }),
      ...createBatchActivities({ orm: database(d), storage: d.storage, config: d.config, startJob: d.startJob, cancelJob: d.cancelJob }),
      ...createSubscriptionActivities({ orm: database(d), storage: d.storage, config: d.config, pauseSchedule: d.pauseSchedule }),
    }),
  },
  webhooks: {
    // deliveries and their retries wait on other people's servers: slots of their own, never a job's.
    // Not shared by account: one account's deliveries have no plan limit, so its waiting attempts could
    // fill any number of slots. Instead an attempt holds its slot a second at most (slow answers are
    // awaited off it) and the server hands each freed slot out by account (fairness), so another
    // account's delivery waits a second at most, not behind the flood
    description: 'webhook deliveries: their workflows, each attempt (outbound HTTP) and its bookkeeping (database)',
    runsWorkflows: true,
    needsDatabase: true,
    needsEgress: false,
    defaultConcurrency: 20,
    activities: (d: QueueDeps) => {
      const webhooks = createWebhookActivities({ orm: database(d), config: d.config, slowAnswers: d.slowAnswers });
      return { attemptDelivery: webhooks.attemptDelivery, recordLostAttempt: webhooks.recordLostAttempt, deliveryTargetActive: webhooks.deliveryTargetActive };
    },
  },
  'media-info': {
    // info reads have capacity of their own, so a backlog of downloads never delays them
    description: 'GET /v1/info: its short workflows and metadata reads (yt-dlp, ffprobe), apart from jobs; batch sources expanded (feeds, playlists)',
    // its own workflow tasks too: a burst of job workflows on control never delays a waiting client
    runsWorkflows: true,
    interactive: true,
    needsDatabase: false,
    needsEgress: true,
    // reads wait on the network and yt-dlp; one account (at most its plan's info reads in flight)
    // runs three quarters, the rest are another account's
    defaultConcurrency: 6,
    sharedByAccount: { inFlightPerAccount: 'maxInfoReads' },
    activities: (deps: QueueDeps) => {
      const { config, storage } = deps;
      const ytdlp = createYtDlpEngine(ytdlpOptionsOf(config));
      const source = createSourceActivities({ ytdlp, ffmpeg: createFfmpegEngine(config), storage, egress: egressOf(deps), config });
      const expansion = createExpansionActivities({ ytdlp, egress: egressOf(deps), storage, allowPrivateNetwork: config.allowPrivateNetwork });
      return { readInfo: source.readInfo, expandBatchSource: expansion.expandBatchSource };
    },
  },
  'media-fetch': {
    description: 'network-bound: metadata, downloads and comments (yt-dlp, direct HTTP, PeerTube)',
    usesWorkDir: true,
    runsWorkflows: false,
    needsDatabase: false,
    needsEgress: true,
    // downloads wait on the network: many at once, a quarter of them always another account's, as one
    // account's slow downloads (each waiting seconds on a silent origin) would otherwise hold them all
    defaultConcurrency: 20,
    sharedByAccount: { inFlightPerAccount: 'maxRunningJobs' },
    activities: (deps: QueueDeps) => {
      const { config, storage } = deps;
      const egress = egressOf(deps);
      const ffmpeg = createFfmpegEngine(config);
      const shared = { ...createSourceActivities({ ytdlp: createYtDlpEngine(ytdlpOptionsOf(config)), ffmpeg, storage, egress, config }), ...createToolUpdateActivities(config) };
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
    // preview waited seconds for one on a slower machine: a quarter of the permits are another account's
    sharedByAccount: { inFlightPerAccount: 'maxRunningJobs' },
    activities: (deps: QueueDeps) => {
      const { config, storage } = deps;
      // every step here is an operation's own (operations/<name>/activities.ts)
      return operationActivities('media-process', { config, storage, ffmpeg: createFfmpegEngine(config), egress: egressOf(deps) });
    },
  },
  'media-speech': {
    // faster-whisper uses every core for one job, so one account runs one job at a time per speech
    // worker, and the second permit is another account's: a long transcript never holds the queue
    description: 'CPU-bound: speech recognition and translation (faster-whisper, Apertium)',
    usesWorkDir: true,
    runsWorkflows: false,
    needsDatabase: false,
    needsEgress: false,
    defaultConcurrency: SPEECH_STEPS_AT_ONCE,
    sharedByAccount: { inFlightPerAccount: 'maxRunningJobs' },
    activities: ({ config, storage }: QueueDeps) => {
      const { registry, translator } = createSpeechServices(config);
      // one warm faster-whisper process per job this worker runs at once
      const whisper = createConfiguredWhisperEngine(config, config.queueConcurrency['media-speech'] ?? SPEECH_STEPS_AT_ONCE);
      if (config.whisperPreload) preloadModel(whisper, registry, config.whisperPreload);
      const ffmpeg = createFfmpegEngine(config);
      const speech = { whisper, registry, translator };
      // recognition is shared by transcribe and translate (and downloads' subtitles, with their tracks); writing and translating are their own steps
      const shared = { ...createRecognitionActivities({ ...speech, ffmpeg, storage, config }), ...createSubtitleTrackActivities({ translator, storage }) };
      return { ...shared, ...operationActivities('media-speech', { config, storage, ffmpeg, speech }, Object.keys(shared)) };
    },
  },
} satisfies Record<TaskQueue, QueueSpec>;

/** Loads a model size into a warm runner now, so the worker's first speech job does not wait for it; a failure is logged, and that job loads it. */
function preloadModel(whisper: WhisperEngine, registry: ModelRegistry, size: ModelSize): void {
  // the multilingual model where both are installed, as a job that names no language gets
  const installed = registry.list().filter((m) => m.size === size);
  const model = (installed.find((m) => !m.englishOnly) ?? installed[0])?.dir;
  if (!model) {
    log.warn({ model: size, installed: registry.describeInstalled() }, 'WHISPER_PRELOAD names a model size that is not installed; nothing preloaded');
    return;
  }
  const started = Date.now();
  whisper.warm(model).then(
    () => log.info({ model: size, ms: Date.now() - started }, 'speech model preloaded'),
    (err: unknown) => log.warn({ model: size, err: err instanceof Error ? err.message : String(err) }, 'speech model not preloaded; the first job loads it'),
  );
}

/** The activities registered on a queue, as workflows see them. */
export type QueueActivities<Q extends TaskQueue> = ReturnType<(typeof QUEUE_TABLE)[Q]['activities']>;
type ActivitiesByQueue = { [Q in TaskQueue]: QueueActivities<Q> };

// The workflows' activity proxies are typed by this table without importing it (that import, even as
// a type, closed a circle through the steps and the registry): it declares its queues' activities in
// the plan they read (declaration merging), as the registry declares the operations' own.
declare module '../workflows/activity-plan' {
  interface QueueActivityTypes extends ActivitiesByQueue {}
}
