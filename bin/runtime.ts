import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/core';
import { makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import { createApp } from '../api/app';
import { createApiServer } from '../api/http-server';
import { JobDispatcher } from '../jobs/dispatcher';
import { openOrm } from '../db/orm';
import { jobCountsByPlan } from '../jobs/repository';
import { serverSecret } from '../db/secrets.repository';
import { createSpeechServices } from '../engines/speech/services';
import { openStorage } from '../engines/open-storage';
import type { Config } from '../lib/config';
import { log } from '../lib/logger';
import { retryPatiently } from '../lib/patience';
import { forwardMetrics, METRICS_CONTENT_TYPE, metricsText, recordForwardedMetric, setBacklogReader, setDiskReader, setJobsByPlanReader, setPlatformBreakerReader, setYtdlpVersionReader } from '../lib/metrics';
import { currentYtdlp } from '../engines/ytdlp/current-version';
import { cachedYtdlpReport } from '../engines/ytdlp/report';
import { openBreakers } from '../platforms/breaker.repository';
import { FileLinks } from '../lib/file-links';
import type { TaskQueue } from '../lib/queues';
import { connectTemporal, createTemporalOrchestrator, ensureSearchAttributes, taskQueueBacklog } from '../workers/temporal-client';
import { TemporalLogForwarder } from '../workers/temporal-logger';
import { ensureSchedules } from '../workers/schedules';
import { superviseDevServer, type SupervisedDevServer } from '../workers/temporal-dev-server';
import { createWorkers, runWorkers } from '../workers/workers';
import { SlowAnswerCompletions } from '../workers/slow-answers';

export interface Running {
  /** Resolves when everything has stopped. */
  done: Promise<void>;
  stop(): Promise<void>;
}

let runtimeInstalled = false;
/** Temporal's logs (core and SDK) into the service's JSON log at LOG_LEVEL; its metrics on TEMPORAL_METRICS_PORT. */
function installTemporalRuntime(config: Config): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = config.logLevel === 'debug' ? 'DEBUG' : config.logLevel === 'info' ? 'INFO' : config.logLevel === 'warn' ? 'WARN' : 'ERROR';
  Runtime.install({
    logger: new TemporalLogForwarder(),
    telemetryOptions: {
      logging: { forward: {}, filter: makeTelemetryFilterString({ core: level, other: level }) },
      ...(config.temporalMetricsPort ? { metrics: { prometheus: { bindAddress: `${config.metricsHost}:${config.temporalMetricsPort}` } } } : {}),
    },
  });
}

/** This process's /metrics on METRICS_HOST:METRICS_PORT, without a token (bind it where only the scraper reaches). */
export async function startMetricsServer(config: Config): Promise<{ close(): Promise<void> } | null> {
  if (!config.metricsPort) return null;
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics here\n');
      return;
    }
    metricsText().then(
      (text) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(text),
      (err: unknown) => {
        log.error({ err }, 'metrics could not be collected');
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.metricsPort, config.metricsHost, () => resolve());
  });
  return { close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Starts the embedded dev server, started again whenever it dies, unless TEMPORAL_ADDRESS names a cluster. */
export async function temporalAddress(config: Config): Promise<{ address: string; dev: SupervisedDevServer | null }> {
  if (config.temporalAddress) return { address: config.temporalAddress, dev: null };
  fs.mkdirSync(config.dataDir, { recursive: true });
  const logFile = path.join(config.dataDir, 'temporal.log');
  const dev = await superviseDevServer(
    { cliPath: config.temporalCliPath, dbFile: path.join(config.dataDir, 'temporal.sqlite'), port: config.temporalDevPort, uiPort: config.temporalUiPort, uiIp: config.temporalUiIp, logFile },
    {
      maxTries: config.temporalDevRestartTries,
      onEvent: (e) => {
        if (e.kind === 'died') log.error({ code: e.code, signal: e.signal }, `the embedded Temporal server exited; starting it again on the same data (its log: ${logFile})`);
        else if (e.kind === 'retry') log.warn({ tries: e.tries, err: e.err.message }, 'the embedded Temporal server did not start; trying again');
        else log.info({ tries: e.tries, down_ms: e.downMs }, 'the embedded Temporal server is back');
      },
    },
  );
  return { address: dev.address, dev };
}

/** Starts the HTTP API against an open database and a Temporal address. */
export async function startApi(config: Config, orm: MikroORM, address: string): Promise<{ server: http.Server; close(): Promise<void> }> {
  // an unreachable bucket stops the start before anything else
  const storage = await openStorage(config);
  const client = await patiently(address, () => connectTemporal(address, config.temporalNamespace));
  const secret = await serverSecret(orm.em.fork(), 'file-links');
  const searchAttributes = await ensureSearchAttributes(client, (msg) => log.warn(msg));
  const orchestrator = createTemporalOrchestrator(client, { ...config, searchAttributes });
  setBacklogReader(taskQueueBacklog(client));
  setJobsByPlanReader(() => jobCountsByPlan(orm.em.fork()));
  setPlatformBreakerReader(() => openBreakers(orm.em.fork()));
  setYtdlpVersionReader(() => currentYtdlp(config).version);
  setDiskReader(config.dataDir, config.minFreeDiskMb * 2 ** 20);
  // yt-dlp's report of its JS runtime, asked once now for /readyz (again only when the version changes)
  cachedYtdlpReport(config);
  const dispatcher = new JobDispatcher(orchestrator, { log: (msg, err) => log.warn({ err: err instanceof Error ? err.message : String(err) }, msg) });
  const app = createApp({
    orm,
    config,
    orchestrator,
    dispatcher,
    links: new FileLinks(secret, config.publicBaseUrl),
    storage,
    speech: createSpeechServices(config),
  });
  const server = createApiServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return {
    server,
    close: async () => {
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await dispatcher.drained();
      await client.connection.close();
    },
  };
}

/**
 * Workers for the given queues in a child process (`mediasvc worker`), against the same Temporal
 * address: the tools those queues start (each a fork of the process that starts it) and the bytes
 * they pipe through the egress proxy then never delay the API's and control's event loop. It gets
 * SIGTERM on stop, and stops by itself should this process die without stopping it.
 */
export function startWorkerProcess(queues: TaskQueue[], address: string, oneArena = false): Running {
  const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: address, MEDIASVC_PARENT_PID: String(process.pid) };
  // as bin/mediasvc starts this process: one malloc arena for Node, the default for its tools
  if (oneArena) Object.assign(env, { MALLOC_ARENA_MAX: '1', MEDIASVC_DEFAULT_ARENAS: '1' });
  // the listeners are this process's
  delete env.METRICS_PORT;
  delete env.TEMPORAL_METRICS_PORT;
  // an IPC channel: counters only the child records (yt-dlp's warnings) come to this process's /metrics
  const child = spawn(process.execPath, [...process.execArgv, path.join(__dirname, 'cli.js'), 'worker', '--queues', queues.join(',')], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.on('message', recordForwardedMetric);
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    done,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await done;
    },
  };
}

/** In a worker process started by startWorkerProcess: a signal to itself once its parent is gone; its counters go to the parent's /metrics. */
export function stopWithParent(): void {
  const parent = Number(process.env.MEDIASVC_PARENT_PID);
  if (!parent) return;
  if (process.send) {
    // the channel alone never keeps this process running
    process.channel?.unref();
    forwardMetrics((m) => {
      if (process.connected) process.send!(m);
    });
  }
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
  }, 2000).unref();
}

/**
 * Opens a connection to Temporal, trying again for up to a minute: a worker process may start while
 * the server is being started again (serve restarts a dead embedded one), or before a cluster is up.
 */
function patiently<T>(address: string, open: () => Promise<T>): Promise<T> {
  return retryPatiently(open, {
    firstMs: 250,
    maxMs: 4000,
    withinMs: 60_000,
    onRetry: (err, wait) => log.warn({ address, err: err instanceof Error ? err.message : String(err) }, `Temporal did not answer; connecting again in ${wait} ms`),
  });
}

/** Starts workers for the given queues against a Temporal address; the control side also owns the schedules. */
export async function startWorkers(config: Config, queues: TaskQueue[], address: string, orm?: MikroORM): Promise<Running> {
  installTemporalRuntime(config);
  const storage = await openStorage(config);
  const connection = await patiently(address, () => NativeConnection.connect({ address }));
  const control = queues.includes('control');
  // the control side starts jobs and owns the schedules; the webhooks side reports slow answers
  const client = control || queues.includes('webhooks') ? await patiently(address, () => connectTemporal(address, config.temporalNamespace)) : null;
  const slowAnswers = queues.includes('webhooks') && client ? new SlowAnswerCompletions(client.activity) : undefined;
  // the reconciler starts jobs with the attributes too
  const controlClient = control ? client : null;
  const searchAttributes = controlClient ? await ensureSearchAttributes(controlClient, (msg) => log.warn(msg)) : false;
  const orchestrator = controlClient ? createTemporalOrchestrator(controlClient, { ...config, searchAttributes }) : null;
  if (controlClient) setBacklogReader(taskQueueBacklog(controlClient));
  setDiskReader(config.dataDir, config.minFreeDiskMb * 2 ** 20);
  const workers = await createWorkers(queues, { config, storage, connection, orm, slowAnswers, startJob: orchestrator ? (input) => orchestrator.startJob(input) : undefined, cancelJob: orchestrator ? (input) => orchestrator.cancelJob(input) : undefined, pauseSchedule: orchestrator ? (id, note) => orchestrator.pauseSchedule(id, note) : undefined });
  const done = runWorkers(workers).finally(async () => {
    // attempts awaiting a slow endpoint finish within the webhook window and are reported before the connection goes
    await slowAnswers?.drain();
    await connection.close();
    await client?.connection.close();
  });
  if (controlClient) await ensureSchedules(controlClient, config);
  return {
    done,
    stop: async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}

export { openOrm };
