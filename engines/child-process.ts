import { spawn } from 'node:child_process';
import readline from 'node:readline';

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
