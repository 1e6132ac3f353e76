/**
 * Throwaway PostgreSQL server for tests (no Docker needed).
 *
 * Uses the Debian server binaries under /usr/lib/postgresql/<version>/bin. The
 * cluster lives in a fresh temp folder, listens on 127.0.0.1 on a free port with
 * trust auth and durability switched off, and is removed again by stop().
 *
 * PostgreSQL refuses to run as root. When the tests run as root, initdb runs via
 * `runuser -u postgres --` and the server is spawned with the postgres user's
 * uid/gid directly (spawn's uid/gid options), NOT via runuser: runuser stays
 * around as a parent process, turns SIGINT into SIGTERM (smart shutdown) and,
 * if it is itself SIGKILLed, leaves the server running as an orphan. Spawning
 * the postmaster directly means the process we signal is the server itself.
 */
import { execFileSync, spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

// @types/pg is not installed, so describe the small part of the client we use.
interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}
const { Client } = require('pg') as {
  Client: new (cfg: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient;
};

export interface TestPostgres {
  /** postgres://USER@127.0.0.1:PORT/DBNAME — a database that exists and is empty. */
  url: string;
  /** The server's own `postgres` database, to make more databases from another process. */
  adminUrl: string;
  /** Creates another empty database on the same server and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: open sessions are terminated), keeping its data directory and port. */
  stopServer(): Promise<void>;
  /** Starts the stopped server again on the same data directory and port. */
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

const PG_ROOT = '/usr/lib/postgresql';
const SUPERUSER = 'postgres';
const OS_USER = 'postgres';
const DEFAULT_DB = 'mediasvc_test';
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** Locates the server binaries (any installed version under /usr/lib/postgresql/*\/bin, highest first), or throws an Error that says to install the Debian package `postgresql`. */
export function findPostgresBin(): string {
  let versions: string[] = [];
  try {
    versions = fs.readdirSync(PG_ROOT);
  } catch {
    // Not installed at all; fall through to the error below.
  }
  const candidates = versions
    .map((v) => ({ v, key: v.split('.').map((p) => Number.parseInt(p, 10)) }))
    .filter(({ key }) => key.length > 0 && key.every((n) => Number.isFinite(n)))
    .sort((a, b) => {
      for (let i = 0; i < Math.max(a.key.length, b.key.length); i++) {
        const d = (b.key[i] ?? 0) - (a.key[i] ?? 0);
        if (d !== 0) return d;
      }
      return 0;
    });
  for (const { v } of candidates) {
    const bin = path.join(PG_ROOT, v, 'bin');
    if (isExecutable(path.join(bin, 'postgres')) && isExecutable(path.join(bin, 'initdb'))) return bin;
  }
  throw new Error(
    `PostgreSQL server binaries not found under ${PG_ROOT}/*/bin (need initdb and postgres). ` +
      'Install the Debian package `postgresql` (apt-get install postgresql) to run these tests.',
  );
}

/** Where the suite runner says its one PostgreSQL server for the run listens (its `postgres` database). */
export const SHARED_POSTGRES_ENV = 'TEST_POSTGRES_ADMIN_URL';

/**
 * A PostgreSQL for a file that only needs databases: the run's one server when the suite runner
 * started it (each caller gets databases of its own there; stopping it stops nothing), else a
 * server of this process's own.
 */
export async function sharedPostgres(): Promise<TestPostgres> {
  const adminUrl = process.env[SHARED_POSTGRES_ENV];
  if (!adminUrl) return startPostgres();
  const base = new URL(adminUrl);
  const createDatabase = async (name: string): Promise<string> => {
    await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
    return new URL(`/${encodeURIComponent(name)}`, base).toString();
  };
  const url = await createDatabase(`${DEFAULT_DB}_${process.pid}_${Date.now().toString(36)}`);
  const notOurs = async (): Promise<void> => {
    throw new Error("the run's shared PostgreSQL is not this file's to stop or start: use startPostgres()");
  };
  return { url, adminUrl, createDatabase, stopServer: notOurs, startServer: notOurs, stop: async () => undefined };
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = findPostgresBin();
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const owner = asRoot ? lookupUser(OS_USER) : undefined;

  const tmpRoot = traversableTmpdir(asRoot);
  const baseDir = fs.mkdtempSync(path.join(tmpRoot, 'mediasvc-pg-'));
  fs.chmodSync(baseDir, 0o755); // mkdtemp makes it 0700; the postgres user must get through it
  const dataDir = path.join(baseDir, 'data');
  const sockDir = path.join(baseDir, 'sock');
  const logFile = path.join(baseDir, 'postgres.log');
  fs.mkdirSync(dataDir, { mode: 0o700 });
  fs.mkdirSync(sockDir, { mode: 0o700 });
  if (owner) {
    fs.chownSync(dataDir, owner.uid, owner.gid);
    fs.chownSync(sockDir, owner.uid, owner.gid);
  }

  let child: ChildProcess | undefined;
  const onExit = (): void => {
    // Synchronous last resort if the test process exits without stop().
    if (child && child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
    try {
      fs.rmSync(baseDir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  };
  process.on('exit', onExit);

  try {
    runInitdb(bin, dataDir, baseDir, asRoot);

    // The port picked can in rare cases be taken before postgres binds it; retry then.
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const logStart = fileSize(logFile);
      child = spawnServer(bin, dataDir, sockDir, port, logFile, baseDir, owner);
      try {
        await waitUntilReady(child, port, logFile);
        break;
      } catch (err) {
        await killAndWait(child);
        const log = readFrom(logFile, logStart);
        if (attempt < 3 && /could not bind|address already in use/i.test(log)) continue;
        throw err;
      }
    }

    const adminUrl = dbUrl(port, 'postgres');
    const createDatabase = async (name: string): Promise<string> => {
      await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
      return dbUrl(port, name);
    };
    const url = await createDatabase(DEFAULT_DB);

    let stopping: Promise<void> | undefined;
    const stopServer = async (): Promise<void> => {
      if (child) await killAndWait(child);
    };
    const startServer = async (): Promise<void> => {
      if (child && child.exitCode === null && child.signalCode === null) return;
      // the port was ours until a moment ago; a restart keeps it, as a real server's address stays the same
      for (let attempt = 1; ; attempt++) {
        const logStart = fileSize(logFile);
        child = spawnServer(bin, dataDir, sockDir, port, logFile, baseDir, owner);
        try {
          await waitUntilReady(child, port, logFile);
          return;
        } catch (err) {
          await killAndWait(child);
          if (attempt < 10 && /could not bind|address already in use/i.test(readFrom(logFile, logStart))) {
            await sleep(1000);
            continue;
          }
          throw err;
        }
      }
    };
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        try {
          if (child) await killAndWait(child);
        } finally {
          process.removeListener('exit', onExit);
          fs.rmSync(baseDir, { recursive: true, force: true });
        }
      })();
      return stopping;
    };
    return { url, adminUrl, createDatabase, stopServer, startServer, stop };
  } catch (err) {
    if (child) await killAndWait(child).catch(() => undefined);
    process.removeListener('exit', onExit);
    fs.rmSync(baseDir, { recursive: true, force: true });
    throw err;
  }
}

function runInitdb(bin: string, dataDir: string, cwd: string, asRoot: boolean): void {
  const initdb = path.join(bin, 'initdb');
  const args = ['-D', dataDir, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-sync'];
  const [cmd, argv] = asRoot ? ['runuser', ['-u', OS_USER, '--', initdb, ...args]] : [initdb, args];
  try {
    execFileSync(cmd, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`initdb failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.trim());
  }
}

function spawnServer(
  bin: string,
  dataDir: string,
  sockDir: string,
  port: number,
  logFile: string,
  cwd: string,
  owner: { uid: number; gid: number } | undefined,
): ChildProcess {
  const args = [
    '-D', dataDir,
    '-p', String(port),
    '-k', sockDir,
    '-c', 'listen_addresses=127.0.0.1',
    '-c', 'fsync=off',
    '-c', 'synchronous_commit=off',
    '-c', 'full_page_writes=off',
  ];
  // Log straight into a file (no pipes), so the child never blocks on a full pipe
  // and does not keep the event loop alive by itself.
  const logFd = fs.openSync(logFile, 'a');
  try {
    const child = spawn(path.join(bin, 'postgres'), args, {
      cwd,
      stdio: ['ignore', logFd, logFd],
      ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
    });
    child.on('error', () => undefined); // surfaced through exitCode / waitUntilReady instead
    child.unref();
    return child;
  } finally {
    fs.closeSync(logFd);
  }
}

async function waitUntilReady(child: ChildProcess, port: number, logFile: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  const url = dbUrl(port, 'postgres');
  let lastErr: unknown;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `postgres exited during startup (code ${String(child.exitCode)}, signal ${String(child.signalCode)}).\n` +
          logTail(logFile),
      );
    }
    try {
      await withClient(url, (c) => c.query('SELECT 1'));
      return;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      const msg = lastErr instanceof Error ? lastErr.message : String(lastErr);
      throw new Error(`postgres did not accept connections on port ${port} within ${START_TIMEOUT_MS} ms (${msg}).\n${logTail(logFile)}`);
    }
    await sleep(100);
  }
}

/** SIGINT (fast shutdown), then SIGKILL if it has not exited after STOP_TIMEOUT_MS. */
async function killAndWait(child: ChildProcess): Promise<void> {
  const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
  if (exited() || child.pid === undefined) return;
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    done.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut && !exited()) {
    child.kill('SIGKILL');
    await done;
  }
}

/** Runs one statement on the database at `url`. */
export async function pgQuery(url: string, sql: string): Promise<void> {
  await withClient(url, (c) => c.query(sql));
}

/** The rows of one query on the database at `url`. */
export async function pgRows<T>(url: string, sql: string): Promise<T[]> {
  return withClient(url, async (c) => ((await c.query(sql)) as { rows: T[] }).rows);
}

async function withClient<T>(url: string, fn: (c: PgClient) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined); // e.g. server going away; the awaited call rejects anyway
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close((err) => (err ? reject(err) : port ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

function lookupUser(name: string): { uid: number; gid: number } {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    if (Number.isInteger(uid) && Number.isInteger(gid)) return { uid, gid };
  } catch {
    // fall through
  }
  throw new Error(
    `Running as root, but the OS user "${name}" (needed to run PostgreSQL) does not exist. ` +
      'Install the Debian package `postgresql`, which creates it.',
  );
}

/** os.tmpdir(), unless (as root) the postgres user could not get through one of its parents. */
function traversableTmpdir(asRoot: boolean): string {
  const dir = os.tmpdir();
  if (!asRoot) return dir;
  let p = path.resolve(dir);
  for (;;) {
    try {
      if ((fs.statSync(p).mode & 0o001) === 0) return '/tmp';
    } catch {
      return '/tmp';
    }
    const parent = path.dirname(p);
    if (parent === p) return dir;
    p = parent;
  }
}

function dbUrl(port: number, db: string): string {
  return `postgres://${SUPERUSER}@127.0.0.1:${port}/${encodeURIComponent(db)}`;
}

function quoteIdent(name: string): string {
  if (name.length === 0 || name.includes('\0')) throw new Error(`invalid database name: ${JSON.stringify(name)}`);
  return `"${name.replace(/"/g, '""')}"`;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

function readFrom(file: string, offset: number): string {
  try {
    return fs.readFileSync(file).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

function logTail(file: string, lines = 30): string {
  const text = readFrom(file, 0);
  if (!text) return `(no server log at ${file})`;
  return `--- last lines of ${file} ---\n${text.trimEnd().split('\n').slice(-lines).join('\n')}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
