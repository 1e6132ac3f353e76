// Noisy neighbour: a business account's 5 thumbnails (created together, created → completed) while an
// enterprise account's burst of fingerprints of a slow source is queued, against the same 5 on an idle
// service. The source is silent 3 s before its first byte and ignores Range, so each burst step holds
// its slot for seconds. The ratio is what fairness, batch priority, running slots and per-account run
// permits buy the neighbour.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serveIgnoringRange } from '../../helpers/fixture-platform';
import { createNeighbour, neighbourThumbnails, submitBurst, waitJobsEnded, type Neighbour } from '../../helpers/noisy-neighbour';
import { fmt, type BenchRow } from '../harness';

const BURST = Number(process.env.BENCH_NOISY_BURST ?? 100);
// the burst's source is silent this long before its first byte, then sends the whole clip whatever the Range
const FIRST_BYTE_MS = 3000;
let slowOrigin: http.Server | null = null;
let slowUrl = '';
let burstAccount: Neighbour;
let neighbour: Neighbour;

const worst = (xs: number[]) => Math.max(...xs);

const row: BenchRow = {
  name: 'noisy neighbour',
  order: 40,
  async setup(ctx) {
    burstAccount = await createNeighbour(ctx.stack, 'enterprise');
    neighbour = await createNeighbour(ctx.stack, 'business');
    slowOrigin = http.createServer((req, res) => serveIgnoringRange(req, res, path.join(ctx.work, 'files', 'clip10.mp4'), FIRST_BYTE_MS));
    await new Promise<void>((r) => slowOrigin!.listen(0, '127.0.0.1', () => r()));
    slowUrl = `http://127.0.0.1:${(slowOrigin.address() as AddressInfo).port}/clip10.mp4`;
  },
  async measure(ctx) {
    const thumbnails = async () => (await neighbourThumbnails(ctx.stack, neighbour, ctx.files.url('clip10.mp4'))).seconds;
    const idle = await thumbnails();
    const t0 = Date.now();
    const burst = await submitBurst(ctx.stack, burstAccount, BURST, '/v1/fingerprint', { url: slowUrl });
    const during = await thumbnails();
    const rows = await waitJobsEnded(ctx.stack, 'the burst', burst, 30 * 60_000);
    return { idleWorst: worst(idle), duringWorst: worst(during), burstSeconds: (Math.max(...rows.map((r) => Number(r.completed_at))) - t0) / 1000 };
  },
  report: (m) => [
    {
      what: `Noisy neighbour: a business account's 5 thumbnails during an enterprise account's burst of ${BURST} fingerprints of a source silent 3 s (slowest of 5, vs idle)`,
      product: `${fmt.s(m.duringWorst!)} during (burst ${fmt.s(m.burstSeconds!)})`,
      peer: `${fmt.s(m.idleWorst!)} idle`,
      ratio: fmt.ratio(m.duringWorst!, m.idleWorst!),
    },
  ],
  async teardown() {
    await new Promise<void>((r) => (slowOrigin ? slowOrigin.close(() => r()) : r()));
  },
};

export const rows = [row];
