// The media rows of `make bench`: each job end to end (created_at → completed_at) through the running
// serve, next to the bare command on the same URL (test/bench/rows/media.rows.ts defines both sides).
// Two groups, so BENCH_ROWS can leave out the long 40-job batch. The first also measures the floor of
// a job's fixed cost: a bare workflow with one no-op activity on the same Temporal server, started and
// awaited; each job's fixed cost (its time minus the bare tool's) is reported against it.
import os from 'node:os';
import path from 'node:path';
import { startFloorWorker, type FloorWorker } from '../floor-worker';
import { fmt, groupCpuParts, median, processCpu, startPeer, type BenchContext, type BenchRow, type CpuParts } from '../harness';
import { mediaRows, startOrigin, type MediaRow, type Origin } from './media.rows';

const CACHE = path.join(os.tmpdir(), 'mediasvc-bench-media');
let origin: Origin | null = null;
let all: Promise<MediaRow[]> | null = null;
let warmed = false;
/** The product's egress proxy alone in its own process, the bare commands' second side (both groups share it). */
let proxyPeer: ReturnType<typeof startPeer> | null = null;

function rowsOf(batch: boolean): Promise<MediaRow[]> {
  all ??= startOrigin(CACHE).then((o) => {
    origin = o;
    return mediaRows(CACHE, o);
  });
  return all.then((rows) => rows.filter((r) => /^40 /.test(r.name) === batch));
}

/** Each single job and bare command runs this many times a round (the round's figure is their median): one run moves by ±0.1–0.3. */
const REPEATS = Math.max(1, Number(process.env.BENCH_MEDIA_REPEATS ?? 3));
const SIDES = ['product', 'bare', 'proxied'] as const;

function group(name: string, order: number, batch: boolean): BenchRow {
  let rows: MediaRow[] = [];
  // the single-job group carries the floor; the batch's jobs overlap, so their fixed costs do not add up
  let floor: FloorWorker | null = null;
  let proxyUrl = '';
  return {
    name,
    order,
    async setup(ctx: BenchContext) {
      rows = await rowsOf(batch);
      proxyPeer ??= startPeer('egress-proxy.js', []);
      proxyUrl = /proxy (\S+)/.exec((await proxyPeer).banner)![1]!;
      if (!batch) {
        floor = await startFloorWorker(ctx);
        await floor.measure(ctx, 3); // the worker's first workflow pays for loading its bundle
      }
      // one warm-up job, so the first row does not pay for workflow bundling and first tool starts
      if (!warmed && rows[0]) await rows[0].product(ctx.stack);
      warmed = true;
    },
    async measure(ctx: BenchContext, round: number) {
      const out: Record<string, number> = {};
      if (floor) {
        await ctx.quiesce();
        out.floor = await floor.measure(ctx, 15);
      }
      const pgid = ctx.stack.svc.child.pid!;
      const repeats = batch ? 1 : REPEATS;
      for (const [i, row] of rows.entries()) {
        const runs: Record<string, number[]> = {};
        const add = (key: string, v: number) => (runs[key] ??= []).push(v);
        for (let r = 0; r < repeats; r++) {
          // rotate which side goes first, so none always runs on a warmer cache
          const turn = round * repeats + r;
          const sides = SIDES.map((_, k) => SIDES[(k + turn) % SIDES.length]!);
          for (const side of sides) {
            await ctx.quiesce();
            origin!.bytes = 0;
            const [parts0, bare0] = [groupCpuParts(pgid), processCpu('self').reaped];
            add(side, side === 'product' ? await row.product(ctx.stack) : await row.bare(side === 'proxied' ? proxyUrl : undefined));
            add(`${side}Bytes`, origin!.bytes);
            if (side === 'product') {
              const parts1 = groupCpuParts(pgid);
              for (const part of Object.keys(parts1) as (keyof CpuParts)[]) add(`cpu_${part}`, parts1[part] - parts0[part]);
            } else if (side === 'bare') add('cpu_bare', processCpu('self').reaped - bare0);
          }
        }
        for (const [key, values] of Object.entries(runs)) out[`${key}${i}`] = median(values);
      }
      return out;
    },
    report: (m) => [
      ...rows.flatMap((row, i) => [
        {
          what: `${row.name} (goal ≤${row.goal}×)`,
          product: `${fmt.s(m[`product${i}`]!)} (${fmt.mb(m[`productBytes${i}`]!)} fetched)`,
          peer: `${fmt.s(m[`bare${i}`]!)} (${fmt.mb(m[`bareBytes${i}`]!)} fetched); through the egress proxy ${fmt.s(m[`proxied${i}`]!)}`,
          ratio: `${fmt.ratio(m[`product${i}`]!, m[`bare${i}`]!)} (${fmt.ratio(m[`product${i}`]!, m[`proxied${i}`]!)} of the proxied command)`,
        },
        {
          what: '(same) CPU seconds: the job (its tools; the media workers\' Node, the egress proxy\'s relay among it; serve; Temporal), the bare command',
          product: `tools ${m[`cpu_tools${i}`]!.toFixed(2)}, media Node ${m[`cpu_mediaNode${i}`]!.toFixed(2)}, serve ${m[`cpu_serve${i}`]!.toFixed(2)}, Temporal ${m[`cpu_temporal${i}`]!.toFixed(2)}`,
          peer: m[`cpu_bare${i}`]!.toFixed(2),
          ratio: '',
        },
      ]),
      ...(m.floor === undefined
        ? []
        : [
            { what: 'floor: a workflow with one no-op activity, started and awaited (median of 15)', product: '', peer: fmt.s(m.floor), ratio: '' },
            ...rows.map((row, i) => {
              const fixed = m[`product${i}`]! - m[`bare${i}`]!;
              // a job faster than the bare command (a warm worker against a fresh process) has no fixed cost to show
              return {
                what: `fixed cost of: ${row.name} (job − bare tool; goal ≤3× the floor)`,
                product: fixed > 0 ? fmt.s(fixed) : 'none: the job is faster than the bare command',
                peer: fmt.s(m.floor!),
                ratio: fixed > 0 ? fmt.ratio(fixed, m.floor!) : '',
              };
            }),
          ]),
    ],
    async teardown() {
      await floor?.stop();
      floor = null;
      await (await proxyPeer)?.stop();
      proxyPeer = null;
      await origin?.close();
      origin = null;
    },
  };
}

export const rows: BenchRow[] = [group('media jobs', 60, false), group('media batch', 70, true)];
