// The test suite's runner (make test, make test-quick): each test file in a mocha process of its own,
// independent files several at a time (most of their time is spent waiting on servers, tools and
// timers), then the timing-sensitive files one at a time, alone. Each file's output is printed whole
// when it ends; at the end come the failures, and each file's wall time, slowest first, with the CPU
// time of every process it started where the machine lets the runner count it (also in
// .test-tmp/test-file-times.txt, which the next run reads to start the slowest files first).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findPostgresBin, SHARED_POSTGRES_ENV, startPostgres, type TestPostgres } from './helpers/postgres';

interface FileSummary {
  passed: number;
  failed: number;
  pending: number;
  failures: { title: string; error: string }[];
}

interface FileResult extends FileSummary {
  file: string;
  phase: string;
  seconds: number;
  /** CPU seconds of the file's processes (mocha and all it started), null where not counted. */
  cpuSeconds: number | null;
  exitCode: number | null;
}

/** A control group that counts the CPU time of a file's processes, and all they start. */
interface CpuGroup {
  procsFile: string;
  seconds(): number | null;
  remove(): void;
}

/**
 * A control group of its own for one file, where this machine lets the runner make one: cgroup v1's
 * cpuacct hierarchy, or cgroup v2. Null elsewhere (the table then has no CPU column's figures).
 */
function cpuGroup(name: string): CpuGroup | null {
  const tries: { base: string; usage: (dir: string) => number }[] = [
    { base: '/sys/fs/cgroup/cpuacct', usage: (dir) => Number(fs.readFileSync(path.join(dir, 'cpuacct.usage'), 'utf8')) / 1e9 },
    ...['/sys/fs/cgroup', '/sys/fs/cgroup/unified'].map((base) => ({
      base,
      usage: (dir: string) => Number(/^usage_usec (\d+)/m.exec(fs.readFileSync(path.join(dir, 'cpu.stat'), 'utf8'))?.[1]) / 1e6,
    })),
  ];
  for (const { base, usage } of tries) {
    const dir = path.join(base, 'mediasvc-tests', `${name}-${process.pid}`);
    try {
      fs.mkdirSync(dir, { recursive: true });
      fs.accessSync(path.join(dir, 'cgroup.procs'), fs.constants.W_OK);
      usage(dir);
    } catch {
      try {
        fs.rmdirSync(dir);
      } catch {
        // not made, or not ours to remove
      }
      continue;
    }
    return {
      procsFile: path.join(dir, 'cgroup.procs'),
      seconds: () => {
        try {
          const s = usage(dir);
          return Number.isFinite(s) ? s : null;
        } catch {
          return null;
        }
      },
      remove: () => {
        try {
          fs.rmdirSync(dir);
        } catch {
          // a process the file left running still holds it
        }
      },
    };
  }
  return null;
}

const root = path.resolve(__dirname, '../..');
const OUT = path.join(root, '.test-tmp');
const TIMES_FILE = path.join(OUT, 'test-file-times.txt');

/** Files that measure time, memory or load, or break their own dependencies: run alone, after the rest, and not in make test-quick. */
const FAULT_AND_TIMING = [
  'dist/test/noisy-neighbour.e2e.test.js',
  'dist/test/fairness.test.js',
  'dist/test/liveness.e2e.test.js',
  'dist/test/durability.e2e.test.js',
  'dist/test/dependency-faults.e2e.test.js',
  'dist/test/heap-trim.test.js',
];

/** What runs alone: those, and the seek reads (how far ffmpeg's range read runs ahead of its decoder grows with the decoder's time). */
const SERIAL = [...FAULT_AND_TIMING, 'dist/test/media-seek.test.js'];

/** What make test-quick leaves out: the fault and timing suites, and the scale-out cluster. */
const QUICK_SKIPS = new Set([...FAULT_AND_TIMING, 'dist/test/scale-out.test.js', 'dist/test/webhooks.durability.test.js']);

/** Where a clean clone starts when no earlier run left its times: the slowest files of the last recorded run. */
const SLOW_FIRST = [
  'dist/test/scale-out.test.js',
  'dist/test/egress.test.js',
  'dist/test/contract.e2e.test.js',
  'dist/test/media-matrix.e2e.test.js',
  'dist/test/speech.e2e.test.js',
  'dist/test/players.e2e.test.js',
  'dist/test/mcp.e2e.test.js',
  'dist/test/collections.e2e.test.js',
  'dist/test/platforms.e2e.test.js',
  'dist/test/media-ops.test.js',
  'dist/test/speech.test.js',
  'dist/test/speakers.test.js',
  'dist/test/media-ops.e2e.test.js',
  'dist/test/webhooks.durability.test.js',
  'dist/test/dashboard.e2e.test.js',
];

function listFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string, match: (name: string) => boolean) => {
    if (!fs.existsSync(path.join(root, dir))) return;
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory() && dir === 'dist/test' && entry.name === 'unit') walk(rel, match);
      else if (entry.isFile() && match(entry.name)) found.push(rel);
    }
  };
  walk('dist/test', (n) => n.endsWith('.test.js') || n.endsWith('.spec.js'));
  for (const op of fs.readdirSync(path.join(root, 'dist/operations'), { withFileTypes: true })) if (op.isDirectory()) walk(`dist/operations/${op.name}`, (n) => n.endsWith('.test.js') || n.endsWith('.spec.js'));
  return found.sort();
}

/** Each file's seconds in the last run's table, when there was one. */
function lastTimes(): Map<string, number> {
  const times = new Map<string, number>();
  try {
    for (const line of fs.readFileSync(TIMES_FILE, 'utf8').split('\n')) {
      const m = /^(\S+\.js)\s+([\d.]+) s/.exec(line);
      if (m) times.set(m[1]!, Number(m[2]));
    }
  } catch {
    // a first run: the built-in order
  }
  return times;
}

function slowestFirst(files: string[]): string[] {
  const times = lastTimes();
  const weight = (f: string) => times.get(f) ?? (SLOW_FIRST.includes(f) ? 1e6 - SLOW_FIRST.indexOf(f) : 0);
  return [...files].sort((a, b) => weight(b) - weight(a));
}

/** The unit specs (pure functions, milliseconds each) share one process: its start costs more than they do. */
const SPECS = 'dist/test/unit/*.spec.js dist/operations/*/*.spec.js';

/** The files one mocha process runs for an entry of the list: the specs together, else the one file. */
function filesOf(entry: string, all: string[]): string[] {
  return entry === SPECS ? all.filter((f) => f.endsWith('.spec.js')) : [entry];
}

function runFile(file: string, phase: string, all: string[]): Promise<FileResult> {
  const name = file === SPECS ? 'unit-specs' : file.replace(/^dist\//, '').replace(/[/.]/g, '_');
  const logFile = path.join(OUT, 'test-logs', `${name}.log`);
  const summaryFile = path.join(OUT, 'test-logs', `${name}.json`);
  fs.rmSync(summaryFile, { force: true });
  const log = fs.openSync(logFile, 'w');
  const started = Date.now();
  const args = ['--enable-source-maps', require.resolve('mocha/bin/mocha.js'), '--no-config', '--require', 'dist/test/setup.js', '--timeout', '120000', '--exit', '--reporter', 'dist/test/file-times-reporter.js', ...filesOf(file, all)];
  const cpu = cpuGroup(name);
  const env = { ...process.env, TEST_SUMMARY_FILE: summaryFile };
  // the shell joins the group before it becomes mocha, so every process the file starts is counted
  const child = cpu
    ? spawn('/bin/sh', ['-c', '{ echo $$ > "$0"; } 2>/dev/null; exec "$@"', cpu.procsFile, process.execPath, ...args], { cwd: root, stdio: ['ignore', log, log], env })
    : spawn(process.execPath, args, { cwd: root, stdio: ['ignore', log, log], env });
  // a file that hangs past its hooks' own timeouts is stopped, and counted failed
  const limit = setTimeout(() => child.kill('SIGTERM'), Number(process.env.TEST_FILE_TIMEOUT_S ?? 45 * 60) * 1000);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(limit);
      fs.closeSync(log);
      let summary: FileSummary = { passed: 0, failed: 0, pending: 0, failures: [] };
      try {
        summary = JSON.parse(fs.readFileSync(summaryFile, 'utf8')) as FileSummary;
      } catch {
        summary.failures.push({ title: '(the file did not finish)', error: `mocha exited with ${signal ?? code}; its output is in ${path.relative(root, logFile)}` });
      }
      const exitCode = signal ? null : code;
      if (exitCode !== 0 && summary.failed === 0) {
        summary.failed = 1;
        if (!summary.failures.length) summary.failures.push({ title: '(the file exited badly)', error: `mocha exited with ${signal ?? code} after its tests` });
      }
      process.stdout.write(`\n━━ ${file} (${phase}, ${((Date.now() - started) / 1000).toFixed(1)} s) ━━\n${fs.readFileSync(logFile, 'utf8')}`);
      const cpuSeconds = cpu?.seconds() ?? null;
      cpu?.remove();
      resolve({ file, phase, seconds: (Date.now() - started) / 1000, cpuSeconds, exitCode, ...summary });
    });
  });
}

async function pool(files: string[], jobs: number, phase: string, all: string[]): Promise<FileResult[]> {
  const queue = [...files];
  const results: FileResult[] = [];
  const lane = async () => {
    for (let file = queue.shift(); file; file = queue.shift()) results.push(await runFile(file, phase, all));
  };
  await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, lane));
  return results;
}

function table(results: FileResult[]): string {
  const rows = [...results].sort((a, b) => b.seconds - a.seconds);
  const total = rows.reduce((s, r) => s + r.seconds, 0);
  const counted = rows.every((r) => r.cpuSeconds !== null);
  const cpuTotal = rows.reduce((s, r) => s + (r.cpuSeconds ?? 0), 0);
  const cpu = (seconds: number | null) => (seconds === null ? '-' : `${seconds.toFixed(1)} s`).padStart(9);
  const width = Math.max(4, ...rows.map((r) => r.file.length));
  const lines = rows.map(
    (r) =>
      `${r.file.padEnd(width)}  ${r.seconds.toFixed(1).padStart(7)} s  ${cpu(r.cpuSeconds)}  ${r.phase.padEnd(8)}  ${String(r.passed).padStart(4)} passed${r.failed ? `, ${r.failed} failed` : ''}${r.pending ? `, ${r.pending} pending` : ''}`,
  );
  return [
    `${'file'.padEnd(width)}  ${'wall'.padStart(9)}  ${'cpu'.padStart(9)}  phase`,
    ...lines,
    `${'all files, one after another'.padEnd(width)}  ${total.toFixed(1).padStart(7)} s  ${cpu(counted ? cpuTotal : null)}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const tier = process.argv.includes('--quick') ? 'quick' : 'full';
  const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  // twice the cores: with 3 at a time on 2 cores they stood idle a quarter of the time (files wait on servers, timers and each other's tools)
  const jobs = Math.max(1, Number(process.env.TEST_JOBS ?? Math.max(2, Math.min(6, 2 * os.cpus().length))));
  const all = only.length ? only : listFiles();
  let files = [...(all.some((f) => f.endsWith('.spec.js')) ? [SPECS] : []), ...all.filter((f) => !f.endsWith('.spec.js'))];
  if (tier === 'quick') files = files.filter((f) => !QUICK_SKIPS.has(f));
  fs.mkdirSync(path.join(OUT, 'test-logs'), { recursive: true });
  const serial = files.filter((f) => SERIAL.includes(f));
  const parallel = slowestFirst(files.filter((f) => !SERIAL.includes(f)));
  // one PostgreSQL for the run: each file that needs one makes its databases there (initdb once)
  let pg: TestPostgres | null = null;
  try {
    findPostgresBin();
    pg = await startPostgres();
    process.env[SHARED_POSTGRES_ENV] = pg.adminUrl;
  } catch (err) {
    console.log(`no shared PostgreSQL for this run (files that need one start their own): ${(err as Error).message}`);
  }
  const started = Date.now();
  console.log(`${tier === 'quick' ? 'make test-quick' : 'make test'}: ${parallel.length} files ${jobs} at a time, then ${serial.length} alone (TEST_JOBS sets how many at a time)`);
  const results = await pool(parallel, jobs, 'parallel', all);
  const parallelSeconds = (Date.now() - started) / 1000;
  results.push(...(await pool(serial, 1, 'alone', all)));
  const wall = (Date.now() - started) / 1000;
  await pg?.stop();
  const failed = results.filter((r) => r.failed > 0);
  const count = (k: 'passed' | 'failed' | 'pending') => results.reduce((s, r) => s + r[k], 0);
  const text = table(results);
  console.log(`\n  Wall time per test file (slowest first):\n\n${text.replace(/^/gm, '  ')}\n`);
  const cpuSeconds = results.every((r) => r.cpuSeconds !== null) ? results.reduce((s, r) => s + r.cpuSeconds!, 0) : null;
  // how busy the machine was: a suite that keeps every core busy is made faster only by doing less
  const busy = cpuSeconds === null ? '' : `; ${(cpuSeconds / 60).toFixed(1)} min of CPU, ${((100 * cpuSeconds) / (wall * os.cpus().length)).toFixed(0)} % of ${os.cpus().length} cores`;
  console.log(`  ${count('passed')} passing, ${count('failed')} failing, ${count('pending')} pending in ${results.length} files; ${(wall / 60).toFixed(1)} min of mocha (${(parallelSeconds / 60).toFixed(1)} min ${jobs} at a time, ${((wall - parallelSeconds) / 60).toFixed(1)} min alone)${busy}`);
  fs.writeFileSync(TIMES_FILE, `${text}\n${(wall / 60).toFixed(1)} min of mocha, ${jobs} at a time\n`);
  if (failed.length) {
    console.log('\n  Failures:');
    for (const r of failed) for (const f of r.failures) console.log(`\n  ${r.file}: ${f.title}\n${f.error.replace(/^/gm, '    ')}`);
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 2;
});
