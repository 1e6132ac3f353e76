import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../lib/config';

const execFileP = promisify(execFile);
export const CLI = path.join(projectRoot, 'bin/mediasvc');

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Runs the operator CLI and returns its stdout lines. */
export async function cli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<string[]> {
  const { stdout } = await execFileP(CLI, args, { env: { ...process.env, ...env }, cwd: projectRoot });
  return stdout.trim().split('\n');
}

export interface Service {
  child: ChildProcess;
  logFile: string;
  /** Sends a signal to the whole process group, as Ctrl-C in a terminal would. */
  signal(sig: NodeJS.Signals): void;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/**
 * Starts a CLI command (serve, api, worker) as its own process group, logging to a file. With
 * `privateDir`, it runs in a mount namespace of its own (root only) where that folder is an empty
 * tmpfs nobody else sees: a machine with a disk of its own. Its pid stays the command's (unshare and sh exec).
 */
export function startService(args: string[], env: NodeJS.ProcessEnv, logFile: string, opts: { privateDir?: string } = {}): Service {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const out = fs.openSync(logFile, 'a');
  const [command, argv] = opts.privateDir
    ? ['unshare', ['--mount', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs -o mode=0700 private-data "$0" && exec "$@"', opts.privateDir, CLI, ...args]]
    : [CLI, args];
  const child = spawn(command, argv, { env: { ...process.env, ...env }, cwd: projectRoot, stdio: ['ignore', out, out], detached: true });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const pid = child.pid!;
  const svc: Service = {
    child,
    logFile,
    signal: (sig) => {
      try {
        process.kill(-pid, sig);
      } catch {
        // already gone
      }
    },
    exited,
  };
  process.once('exit', () => svc.signal('SIGKILL'));
  return svc;
}

/** Stops a service with SIGTERM (SIGKILL after a grace period); resolves with its exit code. */
export async function stopService(svc: Service, graceMs = 20_000): Promise<number | null> {
  svc.signal('SIGTERM');
  const timer = setTimeout(() => svc.signal('SIGKILL'), graceMs);
  const code = await svc.exited;
  clearTimeout(timer);
  return code;
}

/** Polls until `fn` returns a value (not undefined), or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until GET {base}/healthz answers 200. */
export function waitHealthy(baseUrl: string, svc: Service, timeoutMs = 90_000): Promise<true> {
  let dead = false;
  void svc.exited.then(() => {
    dead = true;
  });
  return waitFor(
    `${baseUrl}/healthz`,
    async () => {
      if (dead) throw new Error(`service exited; log: ${fs.readFileSync(svc.logFile, 'utf8').slice(-2000)}`);
      const res = await fetch(`${baseUrl}/healthz`);
      return res.ok ? true : undefined;
    },
    timeoutMs,
  );
}
