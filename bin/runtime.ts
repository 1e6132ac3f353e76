import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/core';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { createApp } from '../api/app';
import { createApiServer } from '../api/http-server';
import { JobDispatcher } from '../api/services/job-dispatcher';
import { openOrm } from '../db/orm';
import { serverSecret } from '../db/secrets.repository';
import { createSpeechServices } from '../engines/speech/services';
import { Storage } from '../engines/storage';
import type { Config } from '../lib/config';
import { FileLinks } from '../lib/file-links';
import type { TaskQueue } from '../lib/queues';
import { connectTemporal, createTemporalOrchestrator } from '../workers/temporal-client';
import { ensureSchedules } from '../workers/schedules';
import { startDevServer, type DevServer } from '../workers/temporal-dev-server';
import { createWorkers, runWorkers } from '../workers/workers';

export interface Running {
  /** Resolves when everything has stopped. */
  done: Promise<void>;
  stop(): Promise<void>;
}

let runtimeInstalled = false;
function quietTemporalRuntime(level: Config['logLevel']): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger(level === 'debug' ? 'DEBUG' : level === 'error' ? 'ERROR' : 'WARN') });
}

/** Starts the embedded dev server unless TEMPORAL_ADDRESS names a cluster. */
export async function temporalAddress(config: Config): Promise<{ address: string; dev: DevServer | null }> {
  if (config.temporalAddress) return { address: config.temporalAddress, dev: null };
  fs.mkdirSync(config.dataDir, { recursive: true });
  const dev = await startDevServer({
    cliPath: config.temporalCliPath,
    dbFile: path.join(config.dataDir, 'temporal.sqlite'),
    port: config.temporalDevPort,
    uiPort: config.temporalUiPort,
    logFile: path.join(config.dataDir, 'temporal.log'),
  });
  return { address: dev.address, dev };
}

/** Starts the HTTP API against an open database and a Temporal address. */
export async function startApi(config: Config, orm: MikroORM, address: string): Promise<{ server: http.Server; close(): Promise<void> }> {
  const client = await connectTemporal(address, config.temporalNamespace);
  const secret = await serverSecret(orm.em.fork(), 'file-links');
  const orchestrator = createTemporalOrchestrator(client, config);
  const dispatcher = new JobDispatcher(orchestrator, { log: (msg, err) => console.warn(`${msg}: ${err instanceof Error ? err.message : String(err)}`) });
  const app = createApp({
    orm,
    config,
    orchestrator,
    dispatcher,
    links: new FileLinks(secret, config.publicBaseUrl),
    storage: new Storage(config),
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

/** Starts workers for the given queues against a Temporal address; the control side also owns the schedules. */
export async function startWorkers(config: Config, queues: TaskQueue[], address: string, orm?: MikroORM): Promise<Running> {
  quietTemporalRuntime(config.logLevel);
  const connection = await NativeConnection.connect({ address });
  const control = queues.includes('control');
  const client = control ? await connectTemporal(address, config.temporalNamespace) : null;
  const orchestrator = client ? createTemporalOrchestrator(client, config) : null;
  const workers = await createWorkers(queues, { config, connection, orm, startJob: orchestrator ? (input) => orchestrator.startJob(input) : undefined });
  const done = runWorkers(workers).finally(async () => {
    await connection.close();
    await client?.connection.close();
  });
  if (client) await ensureSchedules(client, config);
  return {
    done,
    stop: async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}

export { openOrm };
