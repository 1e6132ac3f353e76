// `make bench-media`: issue 16's media rows (test/bench/rows/media.rows.ts), each job end to end through
// a running `serve` next to the bare tool, medians over BENCH_ROUNDS interleaved rounds (default 3).
// Until the shared `make bench` runner exists this is the standalone runner of those rows.
import os from 'node:os';
import path from 'node:path';
import { startServeStack } from '../helpers/serve-stack';
import { mediaRows, startOrigin } from './rows/media.rows';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY, 'i') : null;
  const cache = path.join(os.tmpdir(), 'mediasvc-bench-media');
  const origin = await startOrigin(cache);
  const rows = (await mediaRows(cache, origin)).filter((r) => !only || only.test(r.name));
  const load = os.loadavg()[0]!.toFixed(1);
  console.log(`bench-media: ${rows.length} rows, ${rounds} interleaved rounds, ${os.cpus().length} CPUs, load ${load} at start`);
  const stack = await startServeStack({ name: 'bench-media', plan: 'enterprise', env: { WHISPER_AUTO_DOWNLOAD: '' } });
  const results = rows.map(() => ({ product: [] as number[], bare: [] as number[], productBytes: [] as number[], bareBytes: [] as number[] }));
  try {
    // one warm-up job, so the first row does not pay for workflow bundling and first tool starts
    await rows[0]!.product(stack);
    for (let round = 0; round < rounds; round++) {
      for (const [i, row] of rows.entries()) {
        // alternate which side goes first, so neither always runs on a warmer cache
        const sides = round % 2 ? (['bare', 'product'] as const) : (['product', 'bare'] as const);
        for (const side of sides) {
          origin.bytes = 0;
          const s = side === 'product' ? await row.product(stack) : await row.bare();
          results[i]![side].push(s);
          results[i]![side === 'product' ? 'productBytes' : 'bareBytes'].push(origin.bytes);
        }
      }
    }
  } finally {
    await stack.stop();
    await origin.close();
  }
  const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
  const table = rows.map((row, i) => {
    const r = results[i]!;
    const ratio = median(r.product) / median(r.bare);
    return [row.name, `${median(r.product).toFixed(2)} s`, `${median(r.bare).toFixed(2)} s`, `${ratio.toFixed(2)}x`, `≤${row.goal}x ${ratio <= row.goal ? 'met' : 'NOT met'}`, `${mb(median(r.productBytes))} / ${mb(median(r.bareBytes))}`];
  });
  const head = ['media row', 'product', 'bare', 'ratio', 'goal', 'bytes fetched (product / bare)'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  console.log(line(head));
  for (const r of table) console.log(line(r));
  console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
