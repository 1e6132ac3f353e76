// yt-dlp runs forked from a warm process (warm_runner.py) instead of started fresh: a fresh yt-dlp spends
// about a second of CPU on a busy machine importing itself and compiling its extractors' URL patterns
// before it reads a byte; a forked child starts with both done, and is still a process of its own. A
// program this cannot warm (not a Python yt-dlp launcher), a warm process that is not ready yet, or one
// that fails, and the run is started fresh, as before.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { applyToolNiceness, collectLines, runProcess, type RunOptions, type RunResult } from '../child-process';
import { projectRoot } from '../../lib/config';
import { log } from '../../lib/logger';

const RUNNER = path.join(projectRoot, 'engines', 'ytdlp', 'warm_runner.py');
/** How long a warm process that could not start, or stopped, is not tried again. */
const RETRY_AFTER_MS = 60_000;

/** How to start the Python behind a yt-dlp program: its interpreter, and a folder before PYTHONPATH. */
interface Launch {
  python: string;
  libDir: string | null;
}

/**
 * The Python a yt-dlp program runs: a pip-installed launcher (`#!python` … `from yt_dlp import main`),
 * or the wrapper `mediasvc tools yt-dlp update` writes (PYTHONPATH="lib…" exec "python" -m yt_dlp).
 * Null for anything else (another program, a test's stand-in), which is always started fresh.
 */
export function launchOf(binary: string): Launch | null {
  let text: string;
  try {
    text = fs.readFileSync(binary, 'utf8').slice(0, 4096);
  } catch {
    return null;
  }
  const shebang = /^#!(\/\S+python[\d.]*)\s*\n/.exec(text);
  if (shebang && /^from yt_dlp import main$/m.test(text)) return { python: shebang[1]!, libDir: null };
  const wrapper = /^PYTHONPATH="([^"$]+)\$\{PYTHONPATH:\+:\$PYTHONPATH\}" exec "([^"]+)" -m yt_dlp "\$@"$/m.exec(text);
  if (text.startsWith('#!/bin/sh\n') && wrapper) return { python: wrapper[2]!, libDir: wrapper[1]! };
  return null;
}

/** One warm process: where it listens, and whether it is ready. */
class WarmRunner {
  /** Each start listens on a socket of its own: one that retires removes its own when it goes. */
  socketPath = '';
  private child: ChildProcess | null = null;
  private state: 'starting' | 'ready' | 'stopped' = 'starting';
  private stoppedAt = 0;

  constructor(
    private readonly launch: Launch,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.start();
  }

  get ready(): boolean {
    if (this.state === 'stopped' && Date.now() - this.stoppedAt > RETRY_AFTER_MS) this.start();
    return this.state === 'ready';
  }

  private start(): void {
    this.state = 'starting';
    this.socketPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-ytdlp-')), 'runs.sock');
    const env = { ...this.env, PYTHONPATH: [this.launch.libDir, this.env.PYTHONPATH].filter(Boolean).join(path.delimiter) };
    // stdin stays open while this process lives: its end tells the warm process to take no more runs and go
    const child = spawn(this.launch.python, [RUNNER, this.socketPath], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    child.unref();
    for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as { unref?: () => void }).unref?.();
    readline.createInterface({ input: child.stdout }).on('line', (l) => {
      if (l === 'ready' && this.child === child) this.state = 'ready';
    });
    let said = '';
    child.stderr.on('data', (d: Buffer) => (said = (said + d.toString()).slice(-4000)));
    child.on('error', () => undefined);
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.state = 'stopped';
      this.stoppedAt = Date.now();
      log.warn({ code, signal, stderr: said.trim().split('\n').slice(-5).join('\n') }, 'the warm yt-dlp process stopped; runs start fresh for a minute, then it is started again');
    });
  }

  /** Takes no more runs, for good: the warm process ends once the runs it has in flight have ended. */
  retire(): void {
    this.letGo(Infinity);
  }

  /**
   * A run it could not start: runs start fresh for a while, then a new warm process is started. This one
   * takes no new run and ends once its runs in flight have (killing it would leave them running unwatched).
   */
  failed(): void {
    if (this.state === 'ready') this.letGo(Date.now());
  }

  private letGo(stoppedAt: number): void {
    this.state = 'stopped';
    this.stoppedAt = stoppedAt;
    const child = this.child;
    this.child = null;
    child?.stdin?.end();
  }
}

/** Warm processes by their launch and environment, the most recently used last. */
const runners = new Map<string, { launch: string; env: string; runner: WarmRunner }>();
/** More than this many (settings that differ between engines of one process) and the least used one is retired. */
const MAX_RUNNERS = 4;
const counts = { forked: 0, fresh: 0 };

/** How many yt-dlp runs this process forked from a warm process, and how many it started fresh. */
export function ytdlpRunCounts(): { forked: number; fresh: number } {
  return { ...counts };
}

function runnerFor(binary: string, env: NodeJS.ProcessEnv): WarmRunner | null {
  const launch = launchOf(binary);
  if (!launch) return null;
  const hash = (value: unknown) => crypto.createHash('sha256').update(JSON.stringify(value)).digest('hex');
  const [launchKey, envKey] = [hash(launch), hash(env)];
  const key = `${launchKey}:${envKey}`;
  const found = runners.get(key);
  if (found) {
    // most recently used last
    runners.delete(key);
    runners.set(key, found);
    return found.runner;
  }
  // another yt-dlp for the same settings (an update switched to it): the old one's runs end on it, and then it goes
  for (const [k, r] of runners) {
    if (r.env === envKey && r.launch !== launchKey) {
      r.runner.retire();
      runners.delete(k);
    }
  }
  const runner = new WarmRunner(launch, env);
  runners.set(key, { launch: launchKey, env: envKey, runner });
  for (const [k, r] of runners) {
    if (runners.size <= MAX_RUNNERS) break;
    r.runner.retire();
    runners.delete(k);
  }
  return runner;
}

/** Opens a connection to the warm process and sends its first line. */
function connect(socketPath: string, header: object): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(socketPath);
    sock.once('error', reject);
    sock.once('connect', () => {
      sock.off('error', reject);
      sock.write(`${JSON.stringify(header)}\n`);
      resolve(sock);
    });
  });
}

class NotStarted extends Error {}

/**
 * Runs yt-dlp (`binary`) as runProcess would, forked from a warm process where it can be: the same
 * arguments, environment, output lines, exit code (null when a signal stopped it), niceness and cancel.
 * Only `warm: true` (YTDLP_WARM, on by default) forks it; otherwise it starts fresh.
 */
export async function runYtdlp(binary: string, opts: RunOptions & { warm?: boolean }): Promise<RunResult> {
  const runner = opts.warm !== true || opts.consumeStdout ? null : runnerFor(binary, opts.env ?? process.env);
  if (runner?.ready) {
    try {
      const res = await runWarm(runner, opts);
      counts.forked++;
      return res;
    } catch (err) {
      if (!(err instanceof NotStarted)) throw err;
      runner.failed();
      log.warn({ err: err.message }, 'a yt-dlp run could not be forked from the warm process; started fresh');
    }
  }
  counts.fresh++;
  return runProcess(binary, opts);
}

async function runWarm(runner: WarmRunner, opts: RunOptions): Promise<RunResult> {
  const id = crypto.randomUUID();
  let streams: net.Socket[];
  let control: net.Socket;
  try {
    streams = await Promise.all(['stdout', 'stderr'].map((role) => connect(runner.socketPath, { id, role })));
    control = await connect(runner.socketPath, { id, role: 'control', args: opts.args, cwd: opts.cwd ?? process.cwd() });
  } catch (err) {
    throw new NotStarted(`the warm yt-dlp process refused the run: ${(err as Error).message}`);
  }
  const [out, errStream] = streams as [net.Socket, net.Socket];
  for (const s of streams) s.end(); // nothing goes to the program: its standard input is /dev/null
  const output = collectLines(out, errStream, opts);
  return new Promise<RunResult>((resolve, reject) => {
    let pid: number | null = null;
    let ended: { code: number | null } | null = null;
    const stop = () => {
      if (pid === null) return void control.destroy();
      try {
        process.kill(pid, 'SIGTERM');
        setTimeout(() => {
          try {
            process.kill(pid!, 'SIGKILL');
          } catch {
            // it has ended
          }
        }, 5000).unref();
      } catch {
        // it has ended
      }
    };
    const finish = () => {
      // a cancel still stops the run until its output has ended (a warm process that died leaves its runs going)
      void output.ended.then(() => {
        opts.signal?.removeEventListener('abort', stop);
        resolve({ code: ended?.code ?? null, stdout: output.stdout(), stderr: output.stderr() });
      });
    };
    readline.createInterface({ input: control }).on('line', (line) => {
      let m: { pid?: number; exit?: number; signal?: number; error?: string };
      try {
        m = JSON.parse(line) as typeof m;
      } catch {
        return;
      }
      if (m.error !== undefined && pid === null) {
        for (const s of [...streams, control]) s.destroy();
        return reject(new NotStarted(m.error));
      }
      if (typeof m.pid === 'number') {
        pid = m.pid;
        applyToolNiceness({ pid });
        if (opts.signal?.aborted) stop();
        opts.signal?.addEventListener('abort', stop, { once: true });
      } else if (m.exit !== undefined || m.signal !== undefined) {
        ended = { code: typeof m.exit === 'number' ? m.exit : null };
      }
    });
    control.on('error', () => undefined);
    control.on('close', () => {
      if (pid === null) {
        for (const s of streams) s.destroy();
        return reject(new NotStarted('the warm yt-dlp process closed the run before it started'));
      }
      // closed without an exit, the warm process stopped during the run: its output ends with the child, whose code is unknown
      finish();
    });
  });
}
