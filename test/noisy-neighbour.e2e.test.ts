// One account's burst on shared workers, measured from the other account's side: the second
// account's jobs must not wait behind the burst, and the burst's slow webhook endpoints must hold
// up nobody's jobs. Real serve (API, every worker, the embedded Temporal dev server with fairness).
import assert from 'node:assert/strict';
import path from 'node:path';
import { fixtureCacheDir, serveThrottled, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { ledgerByJob } from './helpers/ledger';
import { createNeighbour, historyBreakdown, neighbourThumbnails, serveDatabase, submitBurst, waitJobsEnded, type Neighbour } from './helpers/noisy-neighbour';
import { startServeStack, type ServeStack } from './helpers/serve-stack';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const BURST = 300;
const ENDPOINTS = 5;
const ENDPOINT_SECONDS = 5;
// the burst's source: about 2 s a download, Range ignored (a plain 200), so every job downloads it
const SLOW_SOURCE_BYTES_PER_SECOND = 150_000;

describe('noisy neighbour: a business account bursts, a pro account keeps its pace (real serve)', function () {
  this.timeout(40 * 60_000);
  let fx: FixturePlatform;
  let rx: Receiver;
  let s: ServeStack;
  let b: Neighbour;

  before(async () => {
    fx = await startFixturePlatform({
      extraRoutes: (_req, res, p) => {
        if (p !== '/slow-source/v480.mp4') return false;
        serveThrottled(res, path.join(fixtureCacheDir(), 'media', 'v480.mp4'), SLOW_SOURCE_BYTES_PER_SECOND);
        return true;
      },
    });
    rx = await startReceiver();
    s = await startServeStack({ name: 'noisy', plan: 'business' });
    b = await createNeighbour(s, 'pro');
  });
  after(async () => {
    await s?.stop();
    await rx?.close();
    await fx?.close();
  });

  it(`the neighbour's thumbnails take at most 3x their idle time + 2 s during a burst of ${BURST} jobs with slow endpoints; the burst completes, its ledger exact, no job waiting on a delivery`, async () => {
    const thumbnails = () => neighbourThumbnails(s, b, fx.url('/media/v480.mp4'));
    const { ids: idleIds, seconds: idle } = await thumbnails();

    for (let i = 0; i < ENDPOINTS; i++) {
      rx.delay(`/slow-${i}`, ENDPOINT_SECONDS * 1000);
      const hook = await s.api('POST', '/v1/webhooks', { url: rx.url(`/slow-${i}`), events: ['job.completed'] });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
    }
    const t0 = Date.now();
    const burst = await submitBurst(s, { accountId: s.accountId, key: s.key }, BURST, '/v1/fingerprint', { url: fx.url('/slow-source/v480.mp4') });
    const queued = (await s.api('GET', '/v1/account')).body as { running_jobs: number; queued_jobs: number };
    const submitted = (Date.now() - t0) / 1000;
    const { ids: duringIds, seconds: during } = await thumbnails();

    const rows = await waitJobsEnded(s, 'the burst', burst, 30 * 60_000);
    const burstSeconds = (Math.max(...rows.map((r) => Number(r.completed_at))) - t0) / 1000;
    const ratios = during.map((d, i) => d / idle[i]!);
    console.log(
      `      neighbour's thumbnails idle ${idle.map((x) => x.toFixed(1)).join(', ')} s; during the burst of ${BURST} (${queued.running_jobs} running, ${queued.queued_jobs} queued when they came) ${during.map((x) => x.toFixed(1)).join(', ')} s, at most ${Math.max(...ratios).toFixed(1)}x; the burst took ${burstSeconds.toFixed(0)} s (submitted in ${submitted.toFixed(1)} s)`,
    );
    // where the neighbour's time went, idle and during the burst: each task's wait in its queue + its run, in ms
    for (const line of await historyBreakdown(s, idleIds)) console.log(`        idle ${line}`);
    for (const line of await historyBreakdown(s, duringIds)) console.log(`        during ${line}`);
    // and the burst's first jobs (ordinary priority, the rest are batch): their steps reach media-process together
    for (const line of await historyBreakdown(s, burst.slice(0, 3))) console.log(`        burst ${line}`);
    for (const [i, d] of during.entries()) assert.ok(d <= 3 * idle[i]! + 2, `thumbnail ${i}: ${d.toFixed(1)} s during the burst against ${idle[i]!.toFixed(1)} s idle`);

    assert.deepEqual([...new Set(rows.map((r) => r.status))], ['completed'], 'every job of the burst completed');
    const ledger = await ledgerByJob(serveDatabase(s));
    for (const id of burst) assert.deepEqual(ledger.get(id), { charges: 1, refunds: 0 }, id);
    assert.equal((await s.api('GET', '/v1/account')).body.balance, 35_000 - BURST, 'the balance moved by exactly the burst');

    // a job is completed before its deliveries start: none completed after its first delivery arrived
    const arrivals = new Map<string, number>();
    for (const r of rx.received) {
      const id = (JSON.parse(r.body) as { data?: { job_id?: string } }).data?.job_id;
      if (id && !arrivals.has(id)) arrivals.set(id, r.at);
    }
    assert.ok(arrivals.size > 0, 'deliveries arrived');
    const late = rows.filter((r) => arrivals.has(r.id) && Number(r.completed_at) > arrivals.get(r.id)!);
    assert.deepEqual(late.map((r) => r.id), [], 'no job completed after its first delivery arrived');
  });
});
