// Resident memory of the whole `serve` tree (API, workers, embedded Temporal), summed over its process
// group: once freshly started and settled (the goal's "idle"), and at the start of each round, after
// the previous rounds' load.
import { execFileSync } from 'node:child_process';
import { fmt, groupProcesses, groupRss, median, processRss, type BenchRow } from '../harness';

const SETTLE_S = 30;
let fresh: { total: number; parts: string } | null = null;
const perRound: { bytes: number; parts: string }[] = [];

/** Seconds since the process started. */
function uptime(pid: number): number {
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
    const { bytes, processes } = groupRss(ctx.stack.svc.child.pid!);
    perRound.push({ bytes, parts: parts(ctx.stack.svc.child.pid!) });
    return { rss: bytes, processes };
  },
  report: () => [
    ...(fresh ? [{ what: `Memory, idle \`serve\` tree, freshly started (${SETTLE_S} s after start; ${fresh.parts})`, product: fmt.mb(fresh.total), peer: '', ratio: '' }] : []),
    { what: 'Memory at the start of each round (after the previous rounds\' load)', product: perRound.map((r) => `${fmt.mb(r.bytes)} (${r.parts})`).join(' / '), peer: '', ratio: '' },
  ],
};

export const rows = [row];
