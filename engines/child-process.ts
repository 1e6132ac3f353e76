import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import readline from 'node:readline';
import type { Readable } from 'node:stream';

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
export function applyToolNiceness(child: Pick<ChildProcess, 'pid'>): void {
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
  /**
   * Takes the program's standard output as a byte stream instead of as lines, read at the
   * consumer's pace (the program blocks while it is not read). The 'stdout' lines then come from
   * file descriptor 3, where the program is told to write them. If the consumer fails, the program
   * is stopped and runProcess rejects with the consumer's error.
   */
  consumeStdout?: (stdout: Readable) => Promise<void>;
  /** False: stdout's lines go to onLine alone and are not kept (a program that prints a line per packet). */
  keepStdout?: boolean;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Spawns a program without a shell; kills it (SIGTERM, then SIGKILL) when the signal aborts. */
export function runProcess(cmd: string, opts: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const consume = opts.consumeStdout;
    const child = spawn(cmd, opts.args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: consume ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'] });
    applyToolNiceness(child);
    const out = child.stdout!;
    const stop = () => {
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    };
    if (opts.signal?.aborted) stop();
    opts.signal?.addEventListener('abort', stop, { once: true });
    const output = collectLines(consume ? (child.stdio[3] as Readable) : out, child.stderr!, opts);
    // the consumer's outcome, settled before the program's close is reported
    const consumed: Promise<Error | null> = consume
      ? consume(out).then(
          () => {
            out.resume(); // whatever the consumer left unread, so the program can finish
            return null;
          },
          (err: unknown) => {
            stop();
            out.destroy();
            return err instanceof Error ? err : new Error(String(err));
          },
        )
      : Promise.resolve(null);
    child.on('error', (err) => {
      opts.signal?.removeEventListener('abort', stop);
      reject(err);
    });
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', stop);
      void consumed.then((failed) => (failed ? reject(failed) : resolve({ code, stdout: output.stdout(), stderr: output.stderr() })));
    });
  });
}

/** A program's output lines as runProcess keeps them: stdout whole (unless told not to), stderr's tail, each line to onLine. */
export function collectLines(stdoutLines: Readable, stderr: Readable, opts: Pick<RunOptions, 'onLine' | 'keepStdout'>): { stdout(): string; stderr(): string; ended: Promise<void> } {
  let out = '';
  let err = '';
  const outLines = readline.createInterface({ input: stdoutLines }).on('line', (l) => {
    if (opts.keepStdout !== false) out += `${l}\n`;
    opts.onLine?.(l, 'stdout');
  });
  const errLines = readline.createInterface({ input: stderr }).on('line', (l) => {
    // keep the tail only; long runs print a lot of progress
    err = (err + `${l}\n`).slice(-64 * 1024);
    opts.onLine?.(l, 'stderr');
  });
  const ended = Promise.all([outLines, errLines].map((rl) => new Promise<void>((resolve) => rl.once('close', () => resolve())))).then(() => undefined);
  return { stdout: () => out, stderr: () => err, ended };
}
