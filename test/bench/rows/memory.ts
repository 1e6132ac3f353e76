// Resident memory of the whole `serve` tree (API, workers, embedded Temporal), summed over its process
// group: once freshly started and settled (the goal's "idle"), and at the start of each round, after
// the previous rounds' load: at once, and again after the same settling time as idle with nothing
// submitted (V8 gives back the heap it grew under load when its allocation rate drops, seconds later).
import { execFileSync } from 'node:child_process';
import { fmt, groupProcesses, groupRss, median, processRss, type BenchRow } from '../harness';

export const SETTLE_S = 30;
let fresh: { total: number; parts: string } | null = null;
const perRound: { bytes: number; parts: string }[] = [];
const settledPerRound: { bytes: number; parts: string }[] = [];

/** The serve tree's resident bytes: idle, and settled at the start of each round (for the memory floor's comparison). */
export function productMemory(): { idle: number | null; settled: number[] } {
  return { idle: fresh?.total ?? null, settled: settledPerRound.map((r) => r.bytes) };
}

/** Seconds since the process started. */
export function uptime(pid: number): number {
  return Number(execFileSync('ps', ['-o', 'etimes=', '-p', String(pid)], { encoding: 'utf8' }).trim());
}

/** RSS of each process of the group, by command name. */
function parts(pgid: number): string {
  return groupProcesses(pgid)
    .map(({ pid, comm }) => ({ comm, bytes: processRss(pid) }))
    .filter((p) => p.bytes !== null)
    .map((p) => `${p.comm} ${fmt.mb(p.bytes!)}`)
    .join(', ');
}

const row: BenchRow = {
  name: 'idle memory',
  order: 0,
  async setup(ctx) {
    const pid = ctx.stack.svc.child.pid!;
    // idle = started, its start-up garbage collected: at least SETTLE_S after start, nothing submitted yet
    const wait = SETTLE_S - uptime(pid);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait * 1000));
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      samples.push(groupRss(pid).bytes);
      await new Promise((r) => setTimeout(r, 1000));
    }
    fresh = { total: median(samples), parts: parts(pid) };
  },
  async measure(ctx) {
    const pid = ctx.stack.svc.child.pid!;
    const { bytes, processes } = groupRss(pid);
    perRound.push({ bytes, parts: parts(pid) });
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const settled = groupRss(pid).bytes;
    settledPerRound.push({ bytes: settled, parts: parts(pid) });
    return { rss: bytes, settledRss: settled, processes };
  },
  report: () => [
    ...(fresh ? [{ what: `Memory, idle \`serve\` tree, freshly started (${SETTLE_S} s after start; ${fresh.parts})`, product: fmt.mb(fresh.total), peer: '', ratio: '' }] : []),
    { what: 'Memory at the start of each round (after the previous rounds\' load), at once', product: perRound.map((r) => `${fmt.mb(r.bytes)} (${r.parts})`).join(' / '), peer: '', ratio: '' },
    ...(settledPerRound.length ? [{ what: `Same, after ${SETTLE_S} s more with nothing submitted (as idle is measured)`, product: settledPerRound.map((r) => `${fmt.mb(r.bytes)} (${r.parts})`).join(' / '), peer: '', ratio: '' }] : []),
  ],
};

export const rows = [row];
