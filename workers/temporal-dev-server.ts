import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../lib/search-attributes';

export interface DevServer {
  address: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface DevServerOptions {
  cliPath: string;
  dbFile: string;
  port: number;
  uiPort: number;
  ip?: string;
  /** Where the Web UI listens (default: `ip`). */
  uiIp?: string;
  logFile?: string;
  /** More arguments for `temporal server start-dev`. */
  extraArgs?: string[];
}

/**
 * Matching by fairness key: each task queue hands out its tasks round-robin across accounts (weighted
 * by plan) instead of first in, first out. Off by default in the server. Fairness orders tasks within
 * one partition and a poller drains partitions at random, so the single-node server keeps one
 * partition per queue and the order is exact; test/fairness.test.ts measures it.
 */
export const FAIRNESS_DYNAMIC_CONFIG = [
  ...['matching.enableFairness=true', 'matching.numTaskqueueReadPartitions=1', 'matching.numTaskqueueWritePartitions=1'].flatMap((v) => ['--dynamic-config-value', v]),
];

/**
 * The history service's cache of workflow state holds up to 128,000 workflows for an hour by default,
 * and the embedded server's memory grew with every burst of jobs (146 → 298 MB over three rounds of
 * `make bench`); 512 holds every workflow a 300-job burst keeps live, and one pushed out is read back
 * from the database on its next task.
 */
export const HISTORY_CACHE_DYNAMIC_CONFIG = ['--dynamic-config-value', 'history.hostLevelCacheMaxSize=512'];

/**
 * The Go runtime collects when its heap has grown by half since the last collection, not doubled
 * (GOGC=100): the embedded server's resident memory after three rounds of `make bench` was 296 MB at
 * 100 and 226 MB at 50, for about as many workflow starts a second. An operator's own GOGC is kept.
 */
export const DEV_SERVER_GOGC = '50';

/**
 * The server's SQLite file in WAL mode, synced at checkpoints: its default (a rollback journal,
 * synced at every commit) spent most of a burst's time in fsync. A killed process still loses no
 * committed transaction; a power cut may lose the last ones, never consistency.
 */
export const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=NORMAL'].flatMap((v) => ['--sqlite-pragma', v]);

/**
 * Starts `temporal server start-dev` (SQLite persistence, Web UI) and waits until its frontend answers.
 * The CLI picks its HTTP API and metrics ports itself, free when it looks and sometimes taken by the
 * time it binds them on a busy machine: a start that fails on a port in use is tried again (3 times).
 */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  if (!fs.existsSync(opts.cliPath)) {
    throw new Error(`Temporal CLI not found at ${opts.cliPath}; run 'make tools' or set TEMPORAL_CLI_PATH`);
  }
  fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const logFrom = opts.logFile && fs.existsSync(opts.logFile) ? fs.statSync(opts.logFile).size : 0;
    try {
      return await startOnce(opts);
    } catch (err) {
      const log = opts.logFile && fs.existsSync(opts.logFile) ? fs.readFileSync(opts.logFile, 'utf8').slice(logFrom) : '';
      if (attempt >= 3 || !(err instanceof DevServerExited) || !/address already in use/.test(log)) throw err;
    }
  }
}

class DevServerExited extends Error {}

async function startOnce(opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const address = `${ip}:${opts.port}`;
  const out = opts.logFile ? fs.openSync(opts.logFile, 'a') : 'ignore';
  const child = spawn(
    opts.cliPath,
    ['server', 'start-dev', '--db-filename', opts.dbFile, '--ip', ip, '--port', String(opts.port), '--ui-port', String(opts.uiPort), ...(opts.uiIp ? ['--ui-ip', opts.uiIp] : []), '--log-level', 'warn', '--namespace', 'default', ...SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', `${a.name}=${a.type}`]), ...FAIRNESS_DYNAMIC_CONFIG, ...HISTORY_CACHE_DYNAMIC_CONFIG, ...SQLITE_PRAGMAS, ...(opts.extraArgs ?? [])],
    { stdio: ['ignore', out, out], env: { ...process.env, GOGC: process.env.GOGC ?? DEV_SERVER_GOGC } },
  );
  if (typeof out === 'number') fs.closeSync(out);
  let exited: number | null = null;
  child.on('exit', (code) => {
    exited = code ?? -1;
  });

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== null) throw new DevServerExited(`temporal dev server exited with code ${exited}${opts.logFile ? `; see ${opts.logFile}` : ''}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      await conn.workflowService.getSystemInfo({});
      await conn.close();
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`temporal dev server did not start on ${address} within 60 s`);
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  return {
    address,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** A dev server that is started again whenever it dies, until it cannot be. */
export interface SupervisedDevServer {
  address: string;
  /** The running server's process (a new one after each restart). */
  readonly process: ChildProcess;
  /** How many times it was started again after dying. */
  readonly restarts: number;
  /** Rejects, with one line for the operator, once the server died and could not be started again. */
  gaveUp: Promise<never>;
  stop(): Promise<void>;
}

export interface SuperviseOptions {
  /** Waits between tries to start it again, ms: the last one repeats until `maxTries` is spent. */
  backoffMs?: number[];
  /** Tries to start it again after one death before giving up. */
  maxTries?: number;
  onEvent?: (event: { kind: 'died'; code: number | null; signal: NodeJS.Signals | null } | { kind: 'restarted'; tries: number; downMs: number } | { kind: 'retry'; tries: number; err: Error }) => void;
}

const SUPERVISE_BACKOFF_MS = [0, 500, 1000, 2000, 4000, 8000];
const SUPERVISE_MAX_TRIES = 10;

/**
 * Starts the dev server and starts it again on the same SQLite file and port whenever it exits
 * without being asked to: `serve` runs the jobs' orchestration inside it, and nothing else would
 * bring it back. Workers and clients reconnect to the same address by themselves. A server that
 * cannot be started again (a corrupt or unwritable database file) ends `gaveUp`.
 */
export async function superviseDevServer(opts: DevServerOptions, sup: SuperviseOptions = {}): Promise<SupervisedDevServer> {
  const backoff = sup.backoffMs ?? SUPERVISE_BACKOFF_MS;
  const maxTries = sup.maxTries ?? SUPERVISE_MAX_TRIES;
  let current = await startDevServer(opts);
  let stopping = false;
  let restarts = 0;
  let giveUp: (err: Error) => void = () => undefined;
  const gaveUp = new Promise<never>((_, reject) => (giveUp = reject));
  // observed only by those who race it; an unobserved rejection must not end the process
  gaveUp.catch(() => undefined);

  const restart = async (): Promise<void> => {
    const downSince = Date.now();
    for (let tries = 1; tries <= maxTries; tries++) {
      await new Promise((r) => setTimeout(r, backoff[Math.min(tries - 1, backoff.length - 1)]));
      if (stopping) return;
      try {
        current = await startDevServer(opts);
        restarts++;
        sup.onEvent?.({ kind: 'restarted', tries, downMs: Date.now() - downSince });
        watch();
        return;
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        sup.onEvent?.({ kind: 'retry', tries, err: e });
        if (tries === maxTries) {
          giveUp(new Error(`the embedded Temporal server died and could not be started again after ${maxTries} tries: ${e.message.split('\n')[0]}${opts.logFile ? ` (its log: ${opts.logFile})` : ''}`));
        }
      }
    }
  };

  const watch = (): void => {
    const child = current.process;
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (stopping) return;
      sup.onEvent?.({ kind: 'died', code, signal });
      void restart();
    };
    if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode);
    else child.once('exit', onExit);
  };
  watch();

  return {
    address: current.address,
    get process() {
      return current.process;
    },
    get restarts() {
      return restarts;
    },
    gaveUp,
    stop: async () => {
      stopping = true;
      await current.stop();
    },
  };
}
