// Webhook latency: the job's completed_at to the moment the receiver has the delivery, for one job
// at a time and for a burst of jobs submitted (and so finishing) together. Real fingerprint jobs on
// the 10 s clip; the endpoint is registered through the API like a client would.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../../helpers/processes';
import { fmt, percentile, type BenchContext, type BenchRow } from '../harness';

const SINGLES = Number(process.env.BENCH_WEBHOOK_SINGLES ?? 3);
const BURST = Number(process.env.BENCH_WEBHOOK_BURST ?? 20);
const received = new Map<string, { at: number; completedAt: number }>();
let server: http.Server | null = null;

async function submit(ctx: BenchContext): Promise<string> {
  const res = await ctx.stack.api('POST', '/v1/fingerprint', { url: ctx.files.url('clip10.mp4') });
  if (res.status !== 202) throw new Error(`POST /v1/fingerprint answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.job_id as string;
}

/** Latencies (ms) of the jobs' first deliveries. */
async function latencies(jobIds: string[]): Promise<number[]> {
  await waitFor(`webhooks of ${jobIds.length} jobs`, async () => (jobIds.every((id) => received.has(id)) ? true : undefined), 300_000, 50);
  return jobIds.map((id) => received.get(id)!).map((r) => r.at - r.completedAt);
}

const row: BenchRow = {
  name: 'webhooks',
  order: 30,
  async setup(ctx) {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = Date.now();
        res.writeHead(200).end();
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { job_id?: string; completed_at?: string | null } };
          const id = body.data?.job_id;
          if (id && body.data?.completed_at && !received.has(id)) received.set(id, { at, completedAt: Date.parse(body.data.completed_at) });
        } catch {
          // not a delivery
        }
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const res = await ctx.stack.api('POST', '/v1/webhooks', { url, events: [] });
    if (res.status !== 201) throw new Error(`POST /v1/webhooks answered ${res.status}`);
  },
  async measure(ctx) {
    const single: number[] = [];
    for (let i = 0; i < SINGLES; i++) single.push(...(await latencies([await submit(ctx)])));
    await ctx.quiesce();
    const burst = await latencies(await Promise.all(Array.from({ length: BURST }, () => submit(ctx))));
    return { singleP95: percentile(single, 95), burstP95: percentile(burst, 95), burstP50: percentile(burst, 50) };
  },
  report: (m) => [
    { what: `Webhook latency, completed_at → received, one job at a time (${SINGLES} per round)`, product: `p95 ${fmt.s(m.singleP95! / 1000)}`, peer: '', ratio: '' },
    { what: `Same, ${BURST} jobs submitted together`, product: `p95 ${fmt.s(m.burstP95! / 1000)}, p50 ${fmt.s(m.burstP50! / 1000)}`, peer: '', ratio: '' },
  ],
  async teardown() {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  },
};

export const rows = [row];
