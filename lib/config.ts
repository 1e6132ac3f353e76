import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { isTaskQueue, TASK_QUEUES, type TaskQueue } from './queues';
import type { SecretsSettings } from './secret-box';
import { parsePlatformConcurrency, sourceProxySettings, ytdlpExtractorArgsBySite, type BreakerSettings, type PlatformConcurrency, type SourceProxySettings } from './source-sites';
import { MODEL_SIZES, type ModelSize } from './media-vocabulary';

/**
 * The largest picture any decoder may allocate (8K DCI, 8192×4320): a small file that declares a
 * huge picture (an "image bomb") is refused before its frame buffer exists.
 */
export const DEFAULT_MAX_SOURCE_PIXELS = 8192 * 4320;
/**
 * Workflows a worker keeps cached. The SDK's default follows the heap limit (about 2,300 on a 4 GB
 * heap), and a workflow that ends without a last task (terminated, timed out) stays cached until
 * pushed out, so serve's memory climbed with every burst; a job's history is short to replay.
 */
export const WORKFLOW_CACHE_DEFAULT = 500;

const flag = z
  .string()
  .optional()
  .transform((v) => v === '1' || v === 'true');

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  SECRETS_KEY: z.string().optional(),
  SECRETS_KEY_FILE: z.string().optional(),
  SECRETS_PREVIOUS_KEYS: z.string().optional(),
  PUBLIC_BASE_URL: z.string().url().optional(),
  DATABASE_URL: z.string().optional(),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_UI_PORT: z.coerce.number().int().default(8233),
  TEMPORAL_UI_IP: z.union([z.ipv4(), z.ipv6()]).default('127.0.0.1'),
  TEMPORAL_DEV_PORT: z.coerce.number().int().default(7233),
  TEMPORAL_DEV_RESTART_TRIES: z.coerce.number().int().min(1).max(1000).default(10),
  DOWNLOAD_URL_TTL_MINUTES: z.coerce.number().positive().default(60),
  STORAGE: z.enum(['local', 's3']).default('local'),
  S3_BUCKET: z.string().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_ENDPOINT: z.string().url().optional(),
  S3_FORCE_PATH_STYLE: flag,
  S3_PREFIX: z.string().default(''),
  S3_DOWNLOADS: z.enum(['stream', 'redirect']).default('stream'),
  ALLOW_PRIVATE_NETWORK: flag,
  PLATFORM_CONCURRENCY: z.string().default(''),
  COOKIES_DIR: z.string().optional(),
  PLATFORM_BREAKER_THRESHOLD: z.coerce.number().int().min(1).max(1000).default(5),
  PLATFORM_BREAKER_WINDOW_SECONDS: z.coerce.number().positive().default(300),
  PLATFORM_BREAKER_PROBE_SECONDS: z.coerce.number().positive().default(60),
  PLATFORM_BREAKER_MAX_WAIT_SECONDS: z.coerce.number().positive().default(3600),
  MAX_SOURCE_DURATION_SECONDS: z.coerce.number().positive().default(4 * 3600),
  MAX_SOURCE_BYTES: z.coerce.number().positive().default(4 * 1024 ** 3),
  MAX_SOURCE_PIXELS: z.coerce.number().int().positive().default(DEFAULT_MAX_SOURCE_PIXELS),
  ALLOW_LIVE: flag,
  YTDLP_PATH: z.string().optional(),
  YTDLP_TOOLS_DIR: z.string().optional(),
  YTDLP_AUTO_UPDATE: z.enum(['off', 'daily']).default('off'),
  YTDLP_PLUGIN_DIRS: z.string().optional(),
  YTDLP_WARM: z.enum(['0', '1', 'true', 'false']).default('1').transform((v) => v === '1' || v === 'true'),
  DENO_PATH: z.string().optional(),
  FFMPEG_PATH: z.string().default('ffmpeg'),
  FFPROBE_PATH: z.string().default('ffprobe'),
  TEMPORAL_CLI_PATH: z.string().optional(),
  INFO_TIMEOUT_SECONDS: z.coerce.number().positive().default(60),
  OPENAI_WAIT_SECONDS: z.coerce.number().positive().default(300),
  TRUST_PROXY: flag,
  SERVER_TIMING: flag,
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z
    .string()
    .default('0,60,300,1800')
    .transform((v) => v.split(',').map((x) => Number(x.trim())))
    .refine((a) => a.length >= 1 && a[0] === 0 && a.every((n, i) => Number.isFinite(n) && n >= 0 && (i === 0 || n > a[i - 1]!)), 'must be increasing seconds starting with 0, e.g. 0,60,300,1800'),
  WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().positive().default(10),
  WHISPER_PYTHON: z.string().optional(),
  WHISPER_MODEL_DIRS: z.string().optional(),
  WHISPER_AUTO_DOWNLOAD: flag,
  WHISPER_BATCH_SIZE: z.coerce.number().int().min(0).max(64).optional(),
  WHISPER_BATCH_FROM_SECONDS: z.coerce.number().min(0).default(30),
  WHISPER_SECTION_SECONDS: z.coerce.number().min(30).default(300),
  WHISPER_PRELOAD: z.enum(['', ...MODEL_SIZES]).default(''),
  WAVEFORM_DECODERS: z.coerce.number().int().min(1).max(16).optional(),
  APERTIUM_PATH: z.string().default('apertium'),
  APERTIUM_MODES_DIR: z.string().default('/usr/share/apertium/modes'),
  DASHBOARD_SESSION_TTL_MINUTES: z.coerce.number().positive().default(720),
  DASHBOARD_SIGN_IN_ATTEMPTS: z.coerce.number().int().min(1).default(10),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').or(z.literal('')).optional(),
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  METRICS_HOST: z.string().default('127.0.0.1'),
  TEMPORAL_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  JOB_TOOL_NICENESS: z.coerce.number().int().min(0).max(19).default(10),
  BATCH_TOOL_NICENESS: z.coerce.number().int().min(0).max(19).default(19),
  SERVE_TOOL_WORKERS: z.enum(['process', 'inline']).default('process'),
  WORKFLOW_CACHE_SIZE: z.coerce.number().int().min(2).max(100_000).default(WORKFLOW_CACHE_DEFAULT),
  MALLOC_TRIM_INTERVAL_SECONDS: z.coerce.number().min(0).max(3600).default(10),
  MIN_FREE_DISK_MB: z.coerce.number().int().min(0).default(100),
  DISK_FULL_RETRY_SECONDS: z.coerce.number().min(0).max(3600).default(30),
  RECONCILE_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(15),
  RECONCILE_AFTER_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  SUBSCRIPTION_MIN_CHECK_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  QUEUE_CONCURRENCY: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const out: Partial<Record<TaskQueue, number>> = {};
      for (const part of v.split(',').map((p) => p.trim()).filter(Boolean)) {
        const [queue = '', n = ''] = part.split('=').map((x) => x.trim());
        if (!isTaskQueue(queue) || !/^[1-9]\d{0,3}$/.test(n)) {
          ctx.addIssue({ code: 'custom', message: `"${part}" is not QUEUE=N; queues are ${TASK_QUEUES.join(', ')}` });
          continue;
        }
        out[queue] = Number(n);
      }
      return out;
    }),
}).superRefine((e, ctx) => {
  if (e.STORAGE === 's3' && !e.S3_BUCKET) ctx.addIssue({ code: 'custom', path: ['S3_BUCKET'], message: 'STORAGE=s3 needs the bucket to keep outputs and uploads in' });
  // a bucket named without STORAGE=s3 would keep every output on this machine's disk, unseen by the others
  if (e.STORAGE !== 's3' && e.S3_BUCKET) ctx.addIssue({ code: 'custom', path: ['S3_BUCKET'], message: 'S3_BUCKET is set but STORAGE is not s3' });
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  filesDir: string;
  workDir: string;
  /** Files clients sent (POST /v1/uploads), one per upload id. */
  uploadsDir: string;
  /** Where outputs and uploads are kept: DATA_DIR (local) or an S3-compatible bucket (s3). */
  storage: 'local' | 's3';
  /** The bucket (STORAGE=s3); credentials come from the AWS SDK's default chain. S3_DOWNLOADS: links stream from the bucket, or redirect to a presigned URL. */
  s3: { bucket: string; region: string; endpoint: string | undefined; forcePathStyle: boolean; prefix: string; downloads: 'stream' | 'redirect' };
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  sqlitePath: string;
  /** Where the key that seals stored secrets comes from (lib/secret-box.ts). */
  secrets: SecretsSettings;
  temporalAddress: string | undefined;
  temporalNamespace: string;
  temporalUiPort: number;
  /** Where the embedded dev server's Web UI listens (TEMPORAL_UI_IP; the image sets 0.0.0.0, while its gRPC port stays on loopback). */
  temporalUiIp: string;
  temporalDevPort: number;
  /** Tries to start a dead embedded dev server again, waits of 0.5 s doubling to 8 s between them, before serve stops (TEMPORAL_DEV_RESTART_TRIES; 10 is about a minute). */
  temporalDevRestartTries: number;
  downloadUrlTtlMinutes: number;
  allowPrivateNetwork: boolean;
  /** Outbound proxies for source traffic (SOURCE_PROXY_URL, SOURCE_PROXY_URL__<site>); webhooks never use them. */
  sourceProxy: SourceProxySettings;
  /** Steps talking to one platform at once, per worker process (PLATFORM_CONCURRENCY). */
  platformConcurrency: PlatformConcurrency;
  /** When a platform that refuses the service makes its jobs wait instead of failing (PLATFORM_BREAKER_*). */
  platformBreaker: BreakerSettings;
  /** Sealed cookies per site (`mediasvc cookies set`), read by the workers that run yt-dlp (COOKIES_DIR, default DATA_DIR/cookies). */
  cookiesDir: string;
  maxSourceDurationSeconds: number;
  maxSourceBytes: number;
  /** The largest picture (width × height) any decoder may allocate; larger sources are refused. */
  maxSourcePixels: number;
  allowLive: boolean;
  ytdlpPath: string;
  /** Versions installed by `mediasvc tools yt-dlp update`, and which is current (YTDLP_TOOLS_DIR, default DATA_DIR/tools/yt-dlp). */
  ytdlpToolsDir: string;
  /** YTDLP_AUTO_UPDATE=daily: a Temporal Schedule runs the update each day (a version failing its self-check is never used). */
  ytdlpAutoUpdate: 'off' | 'daily';
  /** Extra yt-dlp plugin folders (`--plugin-dirs`), from YTDLP_PLUGIN_DIRS (path-delimiter separated). */
  ytdlpPluginDirs: string[];
  /** yt-dlp runs forked from a warm process that has yt-dlp imported and its URL patterns compiled (YTDLP_WARM, on by default; 0: every run starts fresh). */
  ytdlpWarm: boolean;
  /** yt-dlp `--extractor-args` per site (YTDLP_EXTRACTOR_ARGS__<site>), passed only on that site's runs. */
  ytdlpExtractorArgs: Record<string, string[]>;
  /** Deno, the JS runtime yt-dlp solves YouTube's challenges with (DENO_PATH, default the one beside YTDLP_PATH: .venv/bin/deno from PyPI). */
  denoPath: string;
  ffmpegPath: string;
  ffprobePath: string;
  temporalCliPath: string;
  infoTimeoutSeconds: number;
  /** How long an OpenAI-compatible audio call waits on its job before answering 202 with the job's id. */
  openaiWaitSeconds: number;
  /** Offsets of webhook attempts from the first one, ms (contract: 0, 1, 5, 30 minutes). */
  webhookRetryScheduleMs: number[];
  webhookTimeoutMs: number;
  /** Take the client IP from X-Forwarded-For (behind a reverse proxy). */
  trustProxy: boolean;
  /** Send each API response's stage times as a Server-Timing header (SERVER_TIMING; off by default: it tells a caller where the time goes). */
  serverTiming: boolean;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Below this free space under DATA_DIR (MIN_FREE_DISK_MB), new steps that write there wait, and /readyz says so. */
  minFreeDiskMb: number;
  /** How long a step that found the disk full waits before it fails and is retried (DISK_FULL_RETRY_SECONDS). */
  diskFullRetryMs: number;
  /** How often the reconciler looks for jobs whose workflow was never started, and how old they must be. */
  reconcileIntervalSeconds: number;
  /** The floor of a subscription's check_every (SUBSCRIPTION_MIN_CHECK_SECONDS). */
  subscriptionMinCheckSeconds: number;
  reconcileAfterSeconds: number;
  /** GET /metrics on the API port answers a bearer of this token (404 without it). */
  metricsToken: string | undefined;
  /** A separate listener (METRICS_HOST, default 127.0.0.1) serving this process's /metrics without a token. */
  metricsPort: number | undefined;
  metricsHost: string;
  /** The Temporal SDK's own Prometheus exporter (worker processes), on METRICS_HOST. */
  temporalMetricsPort: number | undefined;
  /** CPU niceness of jobs' tool processes (yt-dlp, ffmpeg, whisper), so info reads and the API stay responsive. */
  jobToolNiceness: number;
  /** CPU niceness of batch-priority jobs' tools (never below jobToolNiceness), so a burst yields the CPU to other accounts' jobs. */
  batchToolNiceness: number;
  /** serve: the tool queues' workers in a child process of their own ('process'), or in serve's own ('inline'). */
  serveToolWorkers: 'process' | 'inline';
  /** Workflows a worker keeps in memory between their tasks (WORKFLOW_CACHE_SIZE); the rest replay their history when they next run. */
  workflowCacheSize: number;
  /** How often a process of the service gives glibc's free memory back to the system (MALLOC_TRIM_INTERVAL_SECONDS; 0: never). */
  mallocTrimIntervalMs: number;
  /** Activities run at once per worker, by queue (QUEUE_CONCURRENCY); the queue table has the defaults. */
  queueConcurrency: Partial<Record<TaskQueue, number>>;
  /** Python of the virtualenv that has faster-whisper (its site-packages are searched for models). */
  whisperPython: string;
  /** Extra folders holding Whisper models (CTranslate2), from WHISPER_MODEL_DIRS (path-delimiter separated). */
  whisperModelDirs: string[];
  /** Opt-in: serve every model size, downloading missing models from the hub into DATA_DIR/models. */
  whisperAutoDownload: boolean;
  /** Windows of speech decoded at once (faster-whisper's batched pipeline); 0 or 1: one after another. */
  whisperBatchSize: number;
  /** Audio at least this long (seconds) is decoded in batches; shorter audio one window after another. */
  whisperBatchFromSeconds: number;
  /** Long audio is read and decoded this many seconds at a time (cut at a quiet moment), so memory does not grow with its length. */
  whisperSectionSeconds: number;
  /** A model size a speech worker loads when it starts, so its first job does not wait for the runner and the model; null: loaded by the first job. */
  whisperPreload: ModelSize | null;
  /** ffmpeg runs a long MP4's audio is decoded in at once for its waveform. */
  waveformDecoders: number;
  apertiumPath: string;
  apertiumModesDir: string;
  /** Lifetime of a dashboard session from sign-in, ms. */
  dashboardSessionTtlMs: number;
  /** Failed dashboard sign-ins allowed per 15 minutes, per email and per client IP. */
  dashboardSignInAttempts: number;
};

/** Project root: the folder holding package.json, whether running from source or dist/. */
export const projectRoot = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');

/** Reads settings from an environment map (process.env by default); throws a readable error on bad values. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  const ytdlpPath = e.YTDLP_PATH ?? path.join(projectRoot, '.venv/bin/yt-dlp');
  let sourceProxy: SourceProxySettings;
  let platformConcurrency: PlatformConcurrency;
  let ytdlpExtractorArgs: Record<string, string[]>;
  try {
    sourceProxy = sourceProxySettings(env);
    platformConcurrency = parsePlatformConcurrency(e.PLATFORM_CONCURRENCY);
    ytdlpExtractorArgs = ytdlpExtractorArgsBySite(env);
  } catch (err) {
    throw new Error(`Invalid configuration:\n  ${(err as Error).message}`);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    filesDir: path.join(dataDir, 'files'),
    workDir: path.join(dataDir, 'work'),
    uploadsDir: path.join(dataDir, 'uploads'),
    storage: e.STORAGE,
    s3: {
      bucket: e.S3_BUCKET ?? '',
      region: e.S3_REGION,
      endpoint: e.S3_ENDPOINT || undefined,
      forcePathStyle: e.S3_FORCE_PATH_STYLE,
      // a prefix is a folder in the bucket: "outputs" and "outputs/" name the same one
      prefix: e.S3_PREFIX ? `${e.S3_PREFIX.replace(/^\/+|\/+$/g, '')}/` : '',
      downloads: e.S3_DOWNLOADS,
    },
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://127.0.0.1:${e.PORT}`).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL || undefined,
    sqlitePath: path.join(dataDir, 'mediasvc.sqlite'),
    secrets: {
      key: e.SECRETS_KEY || undefined,
      previousKeys: (e.SECRETS_PREVIOUS_KEYS ?? '').split(',').map((k) => k.trim()).filter(Boolean),
      keyFile: path.resolve(e.SECRETS_KEY_FILE || path.join(dataDir, 'secrets.key')),
      keyFileIsDefault: !e.SECRETS_KEY_FILE,
    },
    temporalAddress: e.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: e.TEMPORAL_NAMESPACE,
    temporalUiPort: e.TEMPORAL_UI_PORT,
    temporalUiIp: e.TEMPORAL_UI_IP,
    temporalDevPort: e.TEMPORAL_DEV_PORT,
    temporalDevRestartTries: e.TEMPORAL_DEV_RESTART_TRIES,
    downloadUrlTtlMinutes: e.DOWNLOAD_URL_TTL_MINUTES,
    allowPrivateNetwork: e.ALLOW_PRIVATE_NETWORK,
    sourceProxy,
    platformConcurrency,
    platformBreaker: {
      threshold: e.PLATFORM_BREAKER_THRESHOLD,
      windowMs: e.PLATFORM_BREAKER_WINDOW_SECONDS * 1000,
      probeAfterMs: e.PLATFORM_BREAKER_PROBE_SECONDS * 1000,
      maxBackoffMs: Math.max(e.PLATFORM_BREAKER_PROBE_SECONDS, 900) * 1000,
      maxWaitMs: e.PLATFORM_BREAKER_MAX_WAIT_SECONDS * 1000,
    },
    cookiesDir: path.resolve(e.COOKIES_DIR || path.join(dataDir, 'cookies')),
    maxSourceDurationSeconds: e.MAX_SOURCE_DURATION_SECONDS,
    maxSourceBytes: e.MAX_SOURCE_BYTES,
    maxSourcePixels: e.MAX_SOURCE_PIXELS,
    allowLive: e.ALLOW_LIVE,
    ytdlpPath,
    ytdlpToolsDir: path.resolve(e.YTDLP_TOOLS_DIR || path.join(dataDir, 'tools', 'yt-dlp')),
    ytdlpAutoUpdate: e.YTDLP_AUTO_UPDATE,
    ytdlpPluginDirs: (e.YTDLP_PLUGIN_DIRS ?? '').split(path.delimiter).filter(Boolean).map((d) => path.resolve(d)),
    ytdlpWarm: e.YTDLP_WARM,
    ytdlpExtractorArgs,
    denoPath: path.resolve(e.DENO_PATH || path.join(path.dirname(ytdlpPath), 'deno')),
    ffmpegPath: e.FFMPEG_PATH,
    ffprobePath: e.FFPROBE_PATH,
    temporalCliPath: e.TEMPORAL_CLI_PATH ?? path.join(projectRoot, '.tools/bin/temporal'),
    infoTimeoutSeconds: e.INFO_TIMEOUT_SECONDS,
    openaiWaitSeconds: e.OPENAI_WAIT_SECONDS,
    trustProxy: e.TRUST_PROXY,
    serverTiming: e.SERVER_TIMING,
    webhookRetryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE_SECONDS.map((x) => x * 1000),
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_SECONDS * 1000,
    logLevel: e.LOG_LEVEL,
    queueConcurrency: e.QUEUE_CONCURRENCY,
    workflowCacheSize: e.WORKFLOW_CACHE_SIZE,
    mallocTrimIntervalMs: e.MALLOC_TRIM_INTERVAL_SECONDS * 1000,
    jobToolNiceness: e.JOB_TOOL_NICENESS,
    batchToolNiceness: Math.max(e.JOB_TOOL_NICENESS, e.BATCH_TOOL_NICENESS),
    serveToolWorkers: e.SERVE_TOOL_WORKERS,
    metricsToken: e.METRICS_TOKEN || undefined,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
    temporalMetricsPort: e.TEMPORAL_METRICS_PORT,
    minFreeDiskMb: e.MIN_FREE_DISK_MB,
    diskFullRetryMs: e.DISK_FULL_RETRY_SECONDS * 1000,
    reconcileIntervalSeconds: e.RECONCILE_INTERVAL_SECONDS,
    subscriptionMinCheckSeconds: e.SUBSCRIPTION_MIN_CHECK_SECONDS,
    reconcileAfterSeconds: e.RECONCILE_AFTER_SECONDS,
    whisperPython: e.WHISPER_PYTHON ?? path.join(projectRoot, '.venv/bin/python'),
    whisperModelDirs: (e.WHISPER_MODEL_DIRS ?? '').split(path.delimiter).filter(Boolean).map((d) => path.resolve(d)),
    whisperAutoDownload: e.WHISPER_AUTO_DOWNLOAD,
    // one window per core, 2 to 8: on 2 cores batches of 2, 4 and 8 ran 10 min of speech equally fast, and smaller ones report progress sooner
    whisperBatchSize: e.WHISPER_BATCH_SIZE ?? Math.min(8, Math.max(2, os.availableParallelism())),
    whisperBatchFromSeconds: e.WHISPER_BATCH_FROM_SECONDS,
    whisperSectionSeconds: e.WHISPER_SECTION_SECONDS,
    whisperPreload: e.WHISPER_PRELOAD || null,
    // one AAC decoder runs on one core: a long source's waveform decodes in stretches, one per core up to 4
    waveformDecoders: e.WAVEFORM_DECODERS ?? Math.min(4, os.availableParallelism()),
    apertiumPath: e.APERTIUM_PATH,
    apertiumModesDir: e.APERTIUM_MODES_DIR,
    dashboardSessionTtlMs: e.DASHBOARD_SESSION_TTL_MINUTES * 60_000,
    dashboardSignInAttempts: e.DASHBOARD_SIGN_IN_ATTEMPTS,
  };
}
