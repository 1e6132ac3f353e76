// Shared pieces of `make bench`: the row interface, a keep-alive HTTP load generator, statistics,
// process-tree memory, a static file server and the table. Benchmarks print figures; they assert nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { parseServerTiming } from '../../lib/request-stages';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Orm } from '../../db/orm';
import type { ServeStack } from '../helpers/serve-stack';

/** What every row gets: the running `serve`, an ORM on its database, a Temporal client and helpers. */
export interface BenchContext {
  stack: ServeStack;
  /** The service's own database, opened by the bench (seeding, keys, completed job rows). */
  orm: Orm;
  /** A client on serve's embedded Temporal. */
  temporal: Client;
  /** A scratch folder, removed at the end. */
  work: string;
  /** Serves files of `work/files` on loopback; `url('clip.mp4')`. */
  files: { url(name: string): string };
  /** Seconds each throughput measurement runs (BENCH_SECONDS). */
  seconds: number;
  rounds: number;
  /** A fresh key on the account (each connection gets its own, so a run never meets the per-key minute limit). */
  newKey(accountId?: string): Promise<string>;
  /** Waits until serve has no pending or processing job and no tool child running. */
  quiesce(): Promise<void>;
}

/** One line of the table. */
export interface TableLine {
  what: string;
  product: string;
  peer: string;
  ratio: string;
}

/**
 * A row group: `measure` runs once per round (rounds interleave the groups), returns named figures,
 * and `report` turns the medians of those figures into table lines.
 */
export interface BenchRow {
  name: string;
  /** Lower runs first within a round. */
  order?: number;
  setup?(ctx: BenchContext): Promise<void>;
  measure(ctx: BenchContext, round: number): Promise<Record<string, number>>;
  report(medians: Record<string, number>): TableLine[];
  teardown?(ctx: BenchContext): Promise<void>;
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<number, number>;
  /** With `stages`: each measured response's latency and its Server-Timing stages (ms). */
  timed?: { ms: number; stages: Record<string, number> }[];
}

export interface LoadOptions {
  url: string;
  method?: string;
  connections: number;
  seconds: number;
  warmupSeconds?: number;
  /** Headers of connection `i` (e.g. its own key). */
  headers?: (i: number) => Record<string, string>;
  body?: () => string;
  /** Sees every response, warm-up and overrun included (e.g. to collect created job ids). */
  onResponse?: (status: number, body: string) => void;
  /** Keep each measured response's Server-Timing stages (the service sends them with SERVER_TIMING on). */
  stages?: boolean;
}

/** A closed-loop load: `connections` keep-alive sockets, each sending its next request when the last one answers. */
export async function load(opts: LoadOptions): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });
  const url = new URL(opts.url);
  const warmupMs = (opts.warmupSeconds ?? 0.5) * 1000;
  const t0 = performance.now();
  const measureFrom = t0 + warmupMs;
  const measureTo = measureFrom + opts.seconds * 1000;
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  const one = (i: number) =>
    new Promise<{ status: number; body: string; timing?: string }>((resolve, reject) => {
      const body = opts.body?.();
      const headers: Record<string, string> = { ...(opts.headers?.(i) ?? {}) };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(body));
      }
      const req = http.request({ agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: opts.method ?? 'GET', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), timing: String(res.headers['server-timing'] ?? '') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  const loop = async (i: number) => {
    for (;;) {
      const start = performance.now();
      if (start >= measureTo) return;
      let res: { status: number; body: string; timing?: string };
      try {
        res = await one(i);
      } catch {
        res = { status: 0, body: '' };
      }
      const end = performance.now();
      opts.onResponse?.(res.status, res.body);
      // throughput counts the answers that arrive inside the window, however long each took
      if (end >= measureFrom && end <= measureTo) {
        latencies.push(end - start);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (opts.stages) timed.push({ ms: end - start, stages: parseServerTiming(res.timing) });
      }
    }
  };
  const timed: NonNullable<LoadResult['timed']> = [];
  await Promise.all(Array.from({ length: opts.connections }, (_, i) => loop(i)));
  agent.destroy();
  return { requests: latencies.length, rps: latencies.length / opts.seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), statuses, ...(opts.stages ? { timed } : {}) };
}

/** Runs `fn` `count` times with at most `concurrency` at once, as fast as it can, for `seconds`; calls per second. */
export async function closedLoop(concurrency: number, seconds: number, fn: () => Promise<void>, warmupSeconds = 0.5): Promise<{ perSecond: number; p50Ms: number; errors: number }> {
  const t0 = performance.now();
  const from = t0 + warmupSeconds * 1000;
  const to = from + seconds * 1000;
  const latencies: number[] = [];
  let errors = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const start = performance.now();
        if (start >= to) return;
        let ok = true;
        try {
          await fn();
        } catch {
          ok = false;
        }
        const end = performance.now();
        if (end >= from && end <= to) {
          if (ok) latencies.push(end - start);
          else errors++;
        }
      }
    }),
  );
  return { perSecond: latencies.length / seconds, p50Ms: percentile(latencies, 50), errors };
}

/** The processes of group `pgid` (pid, command name), read from /proc; one that ends while read is skipped. */
export function groupProcesses(pgid: number): { pid: string; comm: string }[] {
  const out: { pid: string; comm: string }[] = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      // fields after the parenthesised command: state ppid pgrp …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) out.push({ pid, comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) });
    } catch {
      // the process ended while we read it
    }
  }
  return out;
}

/**
 * CPU seconds of one process (`self` for this one) from `/proc/<pid>/stat`: `own` is its user +
 * system time, `reaped` its ended children's. Throws when the process has ended.
 */
export function processCpu(pid: string): { own: number; reaped: number } {
  const ticks = 100; // USER_HZ on Linux
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields 14-17 (utime stime cutime cstime), counted from the state field (3) after the command
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { own: (Number(f[11]) + Number(f[12])) / ticks, reaped: (Number(f[13]) + Number(f[14])) / ticks };
}

/**
 * CPU seconds used so far in group `pgid` (serve's own process, the media workers with their tools,
 * the Temporal dev server): user + system, reaped children's included.
 */
export function groupCpu(pgid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const { pid, comm } of groupProcesses(pgid)) {
    try {
      const { own, reaped } = processCpu(pid);
      // a tool's time moves into its worker's once it ends, so the two count as one
      const name = Number(pid) === pgid ? 'serve' : comm === 'node' || /ffmpeg|ffprobe|python|yt-dlp/.test(comm) ? 'media workers' : comm;
      out.set(name, (out.get(name) ?? 0) + own + reaped);
    } catch {
      // the process ended while we read it
    }
  }
  return out;
}

/** CPU seconds used so far in group `pgid`, by part: serve's own process, the Temporal dev server, the media workers' Node processes (their own work: activities, the egress proxy's relay) and the tools they ran. */
export type CpuParts = Record<'serve' | 'temporal' | 'mediaNode' | 'tools', number>;

export function groupCpuParts(pgid: number): CpuParts {
  const parts: CpuParts = { serve: 0, temporal: 0, mediaNode: 0, tools: 0 };
  for (const { pid, comm } of groupProcesses(pgid)) {
    try {
      const { own, reaped } = processCpu(pid);
      if (Number(pid) === pgid) parts.serve += own;
      else if (comm === 'temporal') parts.temporal += own + reaped;
      else if (comm === 'node') parts.mediaNode += own;
      else parts.tools += own;
      // a Node process's ended children are the tools it ran
      if (comm === 'node' || Number(pid) === pgid) parts.tools += reaped;
    } catch {
      // the process ended while we read it
    }
  }
  return parts;
}

/** What each process name of the group used between two `groupCpu` readings (seconds), largest first. */
export function cpuBetween(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after].map(([name, s]): [string, number] => [name, Math.max(0, s - (before.get(name) ?? 0))]).sort((a, b) => b[1] - a[1]);
}

/** The CPU cores each part of the stack used while `fn` ran (`load`: this process, the load generator). */
export type CoresUsed = Record<'serve' | 'temporal' | 'media' | 'load', number>;

export async function coresWhile<T>(pgid: number, fn: () => Promise<T>): Promise<{ result: T; cores: CoresUsed; seconds: number }> {
  const [cpu0, self0, t0] = [groupCpu(pgid), process.cpuUsage(), performance.now()];
  const result = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const used = new Map(cpuBetween(cpu0, groupCpu(pgid)));
  const self = process.cpuUsage(self0);
  const cores = {
    serve: (used.get('serve') ?? 0) / seconds,
    temporal: (used.get('temporal') ?? 0) / seconds,
    media: (used.get('media workers') ?? 0) / seconds,
    load: (self.user + self.system) / 1e6 / seconds,
  };
  return { result, cores, seconds };
}

/** CoresUsed as a row's figures (`cores_serve`, …), so rounds take their medians. */
export function coresFigures(cores: CoresUsed): Record<string, number> {
  return Object.fromEntries(Object.entries(cores).map(([k, v]) => [`cores_${k}`, v]));
}

/** The medians of coresFigures as one line of the table. */
export function coresLine(m: Record<string, number>): string {
  return `serve ${m.cores_serve!.toFixed(2)}, Temporal dev server ${m.cores_temporal!.toFixed(2)}, media workers and their tools ${m.cores_media!.toFixed(2)}, load generator ${m.cores_load!.toFixed(2)}`;
}

/** Resident memory (bytes) of one process; null when it ended while read. */
export function processRss(pid: string): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null; // the process ended while we read it
  }
}

/** A process's resident memory that is its own (anonymous pages), in bytes: its resident memory less the pages of files it maps, shared libraries above all. */
export function processPrivate(pid: string): number | null {
  try {
    const m = /RssAnon:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

const sum = (each: (number | null)[]) => each.reduce<number>((a, b) => a + (b ?? 0), 0);

/** Resident memory (bytes) summed over every process of the process group `pgid`, and the part of it that is the processes' own (`private`). */
export function groupRss(pgid: number): { bytes: number; private: number; processes: number } {
  const pids = groupProcesses(pgid).map(({ pid }) => pid);
  const each = pids.map(processRss);
  return { bytes: sum(each), private: sum(pids.map(processPrivate)), processes: each.filter((b) => b !== null).length };
}

/** Processes of the group other than the named long-lived ones (tools that jobs are running; a speech worker's warm runner waits, it is not running a tool). */
export function groupTools(pgid: number): string[] {
  return groupProcesses(pgid)
    .filter((p) => /ffmpeg|ffprobe|yt-dlp|python/.test(p.comm) && !isWarmSpeechRunner(p.pid) && !isWarmYtdlp(p.pid))
    .map((p) => p.comm);
}

/** The warm yt-dlp a worker forks its runs from (engines/ytdlp/warm_runner.py): it waits for work, as the warm speech runner does. */
export function isWarmYtdlp(pid: string): boolean {
  try {
    return /warm_runner\.py\0/.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}

export function isWarmSpeechRunner(pid: string): boolean {
  try {
    return /whisper_runner\.py\0--serve/.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}

/** A static file server on loopback for `dir`. */
export async function serveFiles(dir: string): Promise<{ url(name: string): string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(decodeURIComponent((req.url ?? '/').split('?')[0]!)));
    if (!fs.existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    const size = fs.statSync(file).size;
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const type = file.endsWith('.mp4') ? 'video/mp4' : 'application/octet-stream';
    if (range) {
      const start = Number(range[1]);
      const end = range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
      res.writeHead(206, { 'content-type': type, 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${size}`, 'accept-ranges': 'bytes' });
      if (req.method === 'HEAD') res.end();
      else fs.createReadStream(file, { start, end }).pipe(res);
      return;
    }
    res.writeHead(200, { 'content-type': type, 'content-length': size, 'accept-ranges': 'bytes' });
    if (req.method === 'HEAD') res.end();
    else fs.createReadStream(file).pipe(res);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A peer server (test/bench/peers/*.js) in its own process; resolves with its port once it listens. */
export async function startPeer(script: string, args: string[]): Promise<{ port: number; banner: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'peers', script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buf = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const m = /listening (\d+)/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`peer ${script} exited with ${code}`)));
  });
  return {
    port,
    /** What the peer printed up to its `listening` line. */
    banner: buf,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export const fmt = {
  rate: (x: number, unit: string) => `${Number.isFinite(x) ? (x >= 100 ? Math.round(x).toLocaleString('en') : x.toFixed(1)) : 'n/a'} ${unit}`,
  ms: (x: number) => (Number.isFinite(x) ? (x >= 100 ? `${Math.round(x)} ms` : `${x.toFixed(1)} ms`) : 'n/a'),
  s: (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} s` : 'n/a'),
  mb: (bytes: number) => (Number.isFinite(bytes) ? `${Math.round(bytes / 1e6)} MB` : 'n/a'),
  /** product/peer, as "0.42×" (for rates, higher is better; for times, lower is). */
  ratio: (product: number, peer: number) => (Number.isFinite(product) && Number.isFinite(peer) && peer > 0 ? `${(product / peer).toFixed(2)}×` : ''),
};

/** A Markdown table of the lines. */
export function table(lines: TableLine[]): string {
  const head = ['What', 'Product', 'Bare tool or peer', 'Ratio (product/peer)'];
  const rows = lines.map((l) => [l.what, l.product, l.peer, l.ratio]);
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/**
 * Where the slowest 1 % of responses spent their time, stage by stage (the mean of each stage over
 * them, ms), beside the median response's stages: `stage a/b` pairs, then what the server did not
 * account for (the client's latency less the stages: the socket, the event loop's queue).
 */
export function slowestStages(timed: NonNullable<LoadResult['timed']>): { line: string; slow: Record<string, number>; typical: Record<string, number> } {
  if (!timed.length) return { line: 'no timed responses', slow: {}, typical: {} };
  const sorted = [...timed].sort((a, b) => b.ms - a.ms);
  const slow = sorted.slice(0, Math.max(1, Math.ceil(sorted.length / 100)));
  const middle = sorted.slice(Math.floor(sorted.length * 0.45), Math.ceil(sorted.length * 0.55));
  const mean = (rows: typeof timed) => {
    const out: Record<string, number> = {};
    for (const r of rows) {
      let server = 0;
      for (const [k, v] of Object.entries(r.stages)) {
        out[k] = (out[k] ?? 0) + v / rows.length;
        server += v;
      }
      out.outside = (out.outside ?? 0) + Math.max(0, r.ms - server) / rows.length;
      out.total = (out.total ?? 0) + r.ms / rows.length;
    }
    return out;
  };
  const [s, t] = [mean(slow), mean(middle)];
  const names = Object.keys(s).filter((k) => k !== 'total');
  const line = `slowest ${slow.length} (1 %), ms: ${names.map((k) => `${k} ${s[k]!.toFixed(2)}/${(t[k] ?? 0).toFixed(2)}`).join(', ')}; total ${s.total!.toFixed(2)}/${t.total!.toFixed(2)} (slowest/median)`;
  return { line, slow: s, typical: t };
}
