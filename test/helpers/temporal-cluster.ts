// A Temporal cluster as operators run it: the server built from go.temporal.io/server (scripts/install-tools.sh),
// persistence and visibility on PostgreSQL, the schema set up by Temporal's own SQL tool, the operators' dynamic config.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { projectRoot } from '../../lib/config';
import type { TestPostgres } from './postgres';
import { waitFor } from './processes';

const execFileP = promisify(execFile);
export const TEMPORAL_SERVER = path.join(projectRoot, '.tools/bin/temporal-server');
export const TEMPORAL_SQL_TOOL = path.join(projectRoot, '.tools/bin/temporal-sql-tool');

export interface TemporalCluster {
  address: string;
  logFile: string;
  /** Stops the server process (SIGTERM), keeping its databases and ports. */
  stopServer(): Promise<void>;
  /** Starts it again with the same configuration and waits until its frontend answers. */
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

/** The dynamic config operators give their cluster (compose.scale-out.yaml mounts the same file). */
export const CLUSTER_DYNAMIC_CONFIG = path.join(projectRoot, 'scripts/temporal-dynamic-config.yaml');

async function setUpSchema(pg: TestPostgres, database: string, schema: string): Promise<void> {
  const url = new URL(await pg.createDatabase(database));
  const common = ['--plugin', 'postgres12', '--ep', url.hostname, '-p', url.port, '-u', decodeURIComponent(url.username), '--db', database];
  await execFileP(TEMPORAL_SQL_TOOL, [...common, 'setup-schema', '-v', '0.0']);
  await execFileP(TEMPORAL_SQL_TOOL, [...common, 'update-schema', '--schema-name', schema]);
}

/** A port free a moment ago below 32768: the cluster stores membership ports as a PostgreSQL smallint, and the kernel's ephemeral ports start above it. */
async function lowFreePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + crypto.randomInt(12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** Sets up the schema in two new databases on `pg`, starts the server with its four services in one process, and registers the `default` namespace. */
export async function startTemporalCluster(pg: TestPostgres, dir: string): Promise<TemporalCluster> {
  if (!fs.existsSync(TEMPORAL_SERVER)) throw new Error(`Temporal server not found at ${TEMPORAL_SERVER}; run 'make tools'`);
  fs.mkdirSync(dir, { recursive: true });
  // a misspelt key is only a warning to the server, so fairness would silently stay off
  const { stdout } = await execFileP(TEMPORAL_SERVER, ['validate-dynamic-config', CLUSTER_DYNAMIC_CONFIG]);
  if (/warning|error/i.test(stdout)) throw new Error(`${CLUSTER_DYNAMIC_CONFIG} does not validate: ${stdout}`);
  await setUpSchema(pg, 'temporal', 'postgresql/v12/temporal');
  await setUpSchema(pg, 'temporal_visibility', 'postgresql/v12/visibility');
  const db = new URL(pg.url);
  const store = (databaseName: string, maxConns: number) => ({
    sql: { pluginName: 'postgres12', databaseName, connectAddr: `${db.hostname}:${db.port}`, connectProtocol: 'tcp', user: decodeURIComponent(db.username), password: '', maxConns, maxIdleConns: maxConns, maxConnLifetime: '1h' },
  });
  const configFile = path.join(dir, 'temporal-server.yaml');
  // ports are picked again when one found free was taken before the server bound it (files run side by side)
  const writeConfig = async (port: number) => {
    const service = async () => ({ rpc: { grpcPort: await lowFreePort(), membershipPort: await lowFreePort(), bindOnLocalHost: true } });
    const config = {
      log: { stdout: true, level: 'warn' },
      persistence: { defaultStore: 'default', visibilityStore: 'visibility', numHistoryShards: 4, datastores: { default: store('temporal', 20), visibility: store('temporal_visibility', 4) } },
      global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
      services: {
        frontend: { rpc: { grpcPort: port, membershipPort: await lowFreePort(), httpPort: await lowFreePort(), bindOnLocalHost: true } },
        history: await service(),
        matching: await service(),
        worker: await service(),
      },
      clusterMetadata: {
        enableGlobalNamespace: false,
        failoverVersionIncrement: 10,
        masterClusterName: 'active',
        currentClusterName: 'active',
        clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${port}` } },
      },
      dcRedirectionPolicy: { policy: 'noop' },
      dynamicConfigClient: { filepath: CLUSTER_DYNAMIC_CONFIG, pollInterval: '10s' },
    };
    fs.writeFileSync(configFile, JSON.stringify(config, null, 2));
  };
  let port = await lowFreePort();
  await writeConfig(port);
  const logFile = path.join(dir, 'temporal-server.log');
  let address = `127.0.0.1:${port}`;
  let child: ChildProcess;
  let exited = false;
  let exit: Promise<void> = Promise.resolve();
  const spawnServer = () => {
    const out = fs.openSync(logFile, 'a');
    child = spawn(TEMPORAL_SERVER, ['--config-file', configFile, '--allow-no-auth', 'start'], { stdio: ['ignore', out, out] });
    fs.closeSync(out);
    exited = false;
    const own = child;
    exit = new Promise<void>((r) => own.once('exit', () => ((exited = true), r())));
  };
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const answering = () =>
    waitFor(
      `the Temporal server at ${address}`,
      async () => {
        if (exited) throw new Error(`temporal-server exited; log: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
        const conn = await Connection.connect({ address, connectTimeout: 1000 });
        try {
          await conn.workflowService.getSystemInfo({});
        } catch (err) {
          await conn.close();
          throw err;
        }
        return conn;
      },
      120_000,
      500,
    );
  const stopServer = async () => {
    if (exited) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.kill('SIGTERM');
    await exit;
    clearTimeout(timer);
  };
  let connection: Connection;
  for (let attempt = 1; ; attempt++) {
    spawnServer();
    try {
      connection = await answering();
      break;
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test(fs.readFileSync(logFile, 'utf8'))) throw err;
      // a server whose one service could not bind may still be running its others
      await stopServer();
      port = await lowFreePort();
      address = `127.0.0.1:${port}`;
      await writeConfig(port);
      fs.writeFileSync(logFile, '');
    }
  }
  await connection.workflowService.registerNamespace({ namespace: 'default', workflowExecutionRetentionPeriod: msToTs('1 day') });
  // the namespace reaches every service's cache within its refresh interval (10 s)
  await waitFor('the default namespace on every service', async () => {
    // a start goes through the frontend and history services, as a job's will
    const workflowId = `namespace-probe-${Date.now()}`;
    await connection.workflowService.startWorkflowExecution({ namespace: 'default', workflowId, workflowType: { name: 'probe' }, taskQueue: { name: 'namespace-probe' }, requestId: workflowId });
    await connection.workflowService.terminateWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId } });
    return true;
  }, 60_000, 500);
  await connection.close();
  return {
    address,
    logFile,
    stopServer,
    startServer: async () => {
      if (!exited) return;
      spawnServer();
      await (await answering()).close();
    },
    stop: async () => {
      await stopServer();
      process.removeListener('exit', killOnExit);
    },
  };
}
