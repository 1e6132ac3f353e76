// `make bench`: starts `bin/mediasvc serve` (API, every worker, embedded Temporal) on a scratch data
// folder, runs every row group in test/bench/rows/ for BENCH_ROUNDS interleaved rounds, and prints
// the medians as a table: the product's figure, the bare tool or peer beside it, and their ratio.
//
// Rows are discovered: each file in rows/ exports `rows: BenchRow[]`, so row groups are added as
// files, not by editing a list. BENCH_ROWS (a regular expression) picks row groups by name.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection, Client } from '@temporalio/client';
import { createApiKey } from '../../accounts/repository';
import { openOrm } from '../../db/orm';
import { loadConfig } from '../../lib/config';
import { waitFor } from '../helpers/processes';
import { startServeStack } from '../helpers/serve-stack';
import { groupTools, median, serveFiles, table, type BenchContext, type BenchRow, type TableLine } from './harness';

function loadRows(): BenchRow[] {
  const dir = path.join(__dirname, 'rows');
  const pick = process.env.BENCH_ROWS ? new RegExp(process.env.BENCH_ROWS, 'i') : null;
  const rows: BenchRow[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.js')).sort()) {
    const mod = require(path.join(dir, file)) as { rows?: BenchRow[] };
    for (const row of mod.rows ?? []) if (!pick || pick.test(row.name)) rows.push(row);
  }
  return rows.sort((a, b) => (a.order ?? 50) - (b.order ?? 50));
}

async function main(): Promise<void> {
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  const seconds = Math.max(1, Number(process.env.BENCH_SECONDS ?? 4));
  const rows = loadRows();
  const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  console.log(`bench: ${rows.length} row groups (${rows.map((r) => r.name).join(', ')}), ${rounds} rounds, ${seconds} s per throughput run`);
  console.log(`machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, load average ${load} at start`);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-work-'));
  const filesDir = path.join(work, 'files');
  fs.mkdirSync(filesDir);
  // the 10 s 360p clip with sound that the job rows fetch
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440', '-t', '10', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', path.join(filesDir, 'clip10.mp4')]);
  const files = await serveFiles(filesDir);

  // the default LOG_LEVEL (info): access and job lines are part of what a request costs
  const stack = await startServeStack({ name: 'benchapi', plan: 'enterprise', env: { WHISPER_AUTO_DOWNLOAD: '', METRICS_TOKEN: 'bench-metrics-token-0123456789', SERVER_TIMING: '1' } });
  const orm = await openOrm(loadConfig({ ...process.env, ...stack.env }));
  const connection = await Connection.connect({ address: `127.0.0.1:${stack.env.TEMPORAL_DEV_PORT}` });
  const temporal = new Client({ connection, namespace: 'default' });
  const pgid = stack.svc.child.pid!;

  const ctx: BenchContext = {
    stack,
    orm,
    temporal,
    work,
    files,
    seconds,
    rounds,
    newKey: async (accountId = stack.accountId) => (await createApiKey(orm.em.fork(), accountId, 'bench')).key,
    quiesce: async () => {
      await waitFor(
        'serve to go idle',
        async () => {
          const [row] = (await orm.em.getConnection().execute("select count(*) as n from jobs where status in ('pending', 'processing')")) as { n: number }[];
          return Number(row?.n) === 0 && groupTools(pgid).length === 0 ? true : undefined;
        },
        300_000,
        250,
      );
      await new Promise((r) => setTimeout(r, 1000));
    },
  };

  const samples = new Map<BenchRow, Record<string, number>[]>();
  try {
    for (const row of rows) await row.setup?.(ctx);
    for (let round = 1; round <= rounds; round++) {
      for (const row of rows) {
        await ctx.quiesce();
        const t0 = Date.now();
        const figures = await row.measure(ctx, round);
        console.log(`round ${round}/${rounds} ${row.name} (${((Date.now() - t0) / 1000).toFixed(1)} s): ${Object.entries(figures).map(([k, v]) => `${k}=${Number.isInteger(v) ? v : v.toFixed(2)}`).join(' ')}`);
        samples.set(row, [...(samples.get(row) ?? []), figures]);
      }
    }
  } finally {
    for (const row of rows) await row.teardown?.(ctx).catch((err: unknown) => console.error(`teardown of ${row.name}:`, err));
    await connection.close();
    await orm.close();
    await stack.stop();
    await files.close();
    fs.rmSync(work, { recursive: true, force: true });
  }

  const lines: TableLine[] = [];
  for (const row of rows) {
    const all = samples.get(row) ?? [];
    const keys = [...new Set(all.flatMap((s) => Object.keys(s)))];
    lines.push(...row.report(Object.fromEntries(keys.map((k) => [k, median(all.map((s) => s[k]).filter((v): v is number => v !== undefined))]))));
  }
  console.log(`\nmedians over ${rounds} interleaved rounds; ${os.cpus().length} CPUs, load average ${load} at start, ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} at the end\n`);
  console.log(table(lines));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
