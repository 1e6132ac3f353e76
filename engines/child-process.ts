import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import readline from 'node:readline';

const toolNiceness = new AsyncLocalStorage<number>();

/** Runs fn with every tool process it starts at this CPU niceness (jobs' batch work yields to interactive reads). */
export function withToolNiceness<T>(niceness: number, fn: () => T): T {
  return toolNiceness.run(niceness, fn);
}

/** The niceness tools started here would get (0 when none was set). */
export function currentToolNiceness(): number {
  return toolNiceness.getStore() ?? 0;
}

/** Lowers a just-started tool's CPU priority to the caller's niceness, if one was set; its children inherit it. */
export function applyToolNiceness(child: ChildProcess): void {
  const niceness = toolNiceness.getStore();
  if (!niceness || child.pid === undefined) return;
  try {
    os.setPriority(child.pid, niceness);
  } catch {
    // the process may already have exited; priority is an optimisation, never a reason to fail
  }
}

export interface RunOptions {
  args: string[];
  signal?: AbortSignal;
  /** Called for each stdout/stderr line as it arrives. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Spawns a program without a shell; kills it (SIGTERM, then SIGKILL) when the signal aborts. */
export function runProcess(cmd: string, opts: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, opts.args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    applyToolNiceness(child);
    let stdout = '';
    let stderr = '';
    const onAbort = () => {
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    };
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    readline.createInterface({ input: child.stdout }).on('line', (l) => {
      stdout += `${l}\n`;
      opts.onLine?.(l, 'stdout');
    });
    readline.createInterface({ input: child.stderr }).on('line', (l) => {
      // keep the tail only; long runs print a lot of progress
      stderr = (stderr + `${l}\n`).slice(-64 * 1024);
      opts.onLine?.(l, 'stderr');
    });
    child.on('error', (err) => {
      opts.signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({ code, stdout, stderr });
    });
  });
}
