// The media rows of `make bench`: each job end to end (created_at → completed_at) through the running
// serve, next to the bare command on the same URL (test/bench/rows/media.rows.ts defines both sides).
// Two groups, so BENCH_ROWS can leave out the long 40-job batch.
import os from 'node:os';
import path from 'node:path';
import { fmt, type BenchContext, type BenchRow } from '../harness';
import { mediaRows, startOrigin, type MediaRow, type Origin } from './media.rows';

const CACHE = path.join(os.tmpdir(), 'mediasvc-bench-media');
let origin: Origin | null = null;
let all: Promise<MediaRow[]> | null = null;
let warmed = false;

function rowsOf(batch: boolean): Promise<MediaRow[]> {
  all ??= startOrigin(CACHE).then((o) => {
    origin = o;
    return mediaRows(CACHE, o);
  });
  return all.then((rows) => rows.filter((r) => /^40 /.test(r.name) === batch));
}

function group(name: string, order: number, batch: boolean): BenchRow {
  let rows: MediaRow[] = [];
  return {
    name,
    order,
    async setup(ctx: BenchContext) {
      rows = await rowsOf(batch);
      // one warm-up job, so the first row does not pay for workflow bundling and first tool starts
      if (!warmed && rows[0]) await rows[0].product(ctx.stack);
      warmed = true;
    },
    async measure(ctx: BenchContext, round: number) {
      const out: Record<string, number> = {};
      for (const [i, row] of rows.entries()) {
        // alternate which side goes first, so neither always runs on a warmer cache
        const sides = round % 2 ? (['product', 'bare'] as const) : (['bare', 'product'] as const);
        for (const side of sides) {
          await ctx.quiesce();
          origin!.bytes = 0;
          out[`${side}${i}`] = side === 'product' ? await row.product(ctx.stack) : await row.bare();
          out[`${side}Bytes${i}`] = origin!.bytes;
        }
      }
      return out;
    },
    report: (m) =>
      rows.map((row, i) => ({
        what: `${row.name} (goal ≤${row.goal}×)`,
        product: `${fmt.s(m[`product${i}`]!)} (${fmt.mb(m[`productBytes${i}`]!)} fetched)`,
        peer: `${fmt.s(m[`bare${i}`]!)} (${fmt.mb(m[`bareBytes${i}`]!)} fetched)`,
        ratio: fmt.ratio(m[`product${i}`]!, m[`bare${i}`]!),
      })),
    async teardown() {
      await origin?.close();
      origin = null;
    },
  };
}

export const rows: BenchRow[] = [group('media jobs', 60, false), group('media batch', 70, true)];
