// mocha's spec reporter, and at the end each test file's wall time (its first suite's start to its
// last suite's end, hooks included: the stacks a file starts count), slowest first, on standard
// output and in .test-tmp/test-file-times.txt, so every run says where its time went.
import fs from 'node:fs';
import path from 'node:path';
import Mocha from 'mocha';

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_RUN_END } = Mocha.Runner.constants;

interface FileTime {
  start: number;
  end: number;
  passed: number;
  failed: number;
  pending: number;
}

/** The table of per-file times, slowest first, with each file's share of the whole. */
function fileTimesTable(times: Map<string, FileTime>, root = process.cwd()): string {
  const rows = [...times.entries()].map(([file, t]) => ({ file: path.relative(root, file), seconds: (t.end - t.start) / 1000, ...t })).sort((a, b) => b.seconds - a.seconds);
  const total = rows.reduce((sum, r) => sum + r.seconds, 0);
  const width = Math.max(4, ...rows.map((r) => r.file.length));
  const lines = rows.map((r) => `${r.file.padEnd(width)}  ${r.seconds.toFixed(1).padStart(7)} s  ${((100 * r.seconds) / (total || 1)).toFixed(1).padStart(5)} %  ${String(r.passed).padStart(4)} passed${r.failed ? `, ${r.failed} failed` : ''}${r.pending ? `, ${r.pending} pending` : ''}`);
  return [`${'file'.padEnd(width)}  ${'wall'.padStart(9)}  ${'share'.padStart(7)}`, ...lines, `${'all files'.padEnd(width)}  ${total.toFixed(1).padStart(7)} s`].join('\n');
}

class FileTimesReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const times = new Map<string, FileTime>();
    const of = (file: string | undefined): FileTime | undefined => {
      if (!file) return undefined;
      let t = times.get(file);
      if (!t) times.set(file, (t = { start: Date.now(), end: Date.now(), passed: 0, failed: 0, pending: 0 }));
      return t;
    };
    runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => void of(suite.file));
    runner.on(EVENT_SUITE_END, (suite: Mocha.Suite) => {
      const t = of(suite.file);
      if (t) t.end = Date.now();
    });
    runner.on(EVENT_TEST_PASS, (test: Mocha.Test) => void (of(test.file) && of(test.file)!.passed++));
    runner.on(EVENT_TEST_FAIL, (test: Mocha.Test) => void (of(test.file) && of(test.file)!.failed++));
    runner.on(EVENT_TEST_PENDING, (test: Mocha.Test) => void (of(test.file) && of(test.file)!.pending++));
    const failures: { title: string; error: string }[] = [];
    runner.on(EVENT_TEST_FAIL, (test: Mocha.Test, err: Error) => void failures.push({ title: test.fullTitle(), error: String(err?.stack ?? err).split('\n').slice(0, 12).join('\n') }));
    runner.once(EVENT_RUN_END, () => {
      // under the suite runner (one file per process) the counts go to it, and it prints the table
      const summaryFile = process.env.TEST_SUMMARY_FILE;
      if (summaryFile) {
        const sum = (k: 'passed' | 'failed' | 'pending') => [...times.values()].reduce((n, t) => n + t[k], 0);
        fs.writeFileSync(summaryFile, JSON.stringify({ passed: sum('passed'), failed: sum('failed'), pending: sum('pending'), failures }));
        return;
      }
      const table = fileTimesTable(times);
      console.log(`\n  Wall time per test file (slowest first):\n\n${table.replace(/^/gm, '  ')}\n`);
      try {
        fs.mkdirSync('.test-tmp', { recursive: true });
        fs.writeFileSync(path.join('.test-tmp', 'test-file-times.txt'), `${table}\n`);
      } catch {
        // the table on standard output is the record; the file is a convenience
      }
    });
  }
}

export = FileTimesReporter;
