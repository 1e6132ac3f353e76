// One account's burst on shared workers, measured from other accounts' side: their jobs must not
// wait behind the burst, and the burst's slow webhook endpoints must hold up nobody's jobs. The
// burst is the biggest plan's, from a source that is silent for seconds before its first byte and
// ignores Range, so each of its steps holds a slot for seconds while it waits. Real serve (API,
// every worker, the embedded Temporal dev server with fairness).
import assert from 'node:assert/strict';
import path from 'node:path';
import { fixtureCacheDir, serveIgnoringRange, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { ledgerByJob } from './helpers/ledger';
import { createNeighbour, historyBreakdown, jobRows, neighbourThumbnails, serveDatabase, submitBurst, waitJobsEnded, type Neighbour } from './helpers/noisy-neighbour';
import { waitFor } from './helpers/processes';
import { startServeStack, type ServeStack } from './helpers/serve-stack';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const BURST = 150;
const ENDPOINTS = 5;
const ENDPOINT_SECONDS = 5;
// the burst's source is silent this long before its first byte (headers included)
const FIRST_BYTE_MS = 3000;
const QUIET_PLANS = ['business', 'free'] as const;
const QUIET_HOOK = '/quiet-business';

describe('noisy neighbour: an enterprise account bursts on a slow source, business and free accounts keep their pace (real serve)', function () {
  this.timeout(40 * 60_000);
  let fx: FixturePlatform;
  let rx: Receiver;
  let s: ServeStack;
  const quiet = new Map<string, Neighbour>();
  let quietHook: number;

  before(async () => {
    const media = (name: string) => path.join(fixtureCacheDir(), 'media', name);
    fx = await startFixturePlatform({
      extraRoutes: (req, res, p) => {
        if (p === '/slow-first-byte/v480.mp4') serveIgnoringRange(req, res, media('v480.mp4'), FIRST_BYTE_MS);
        else if (p === '/no-range/v720.mp4') serveIgnoringRange(req, res, media('v720.mp4'));
        else return false;
        return true;
      },
    });
    rx = await startReceiver();
    // five webhook slots: the burst's deliveries to slow endpoints outrun them, so the business account's
    // deliveries go past a queue that stays full (each slow attempt frees its slot after a second)
    s = await startServeStack({ name: 'noisy', plan: 'enterprise', env: { QUEUE_CONCURRENCY: 'webhooks=5' } });
    for (const plan of QUIET_PLANS) quiet.set(plan, await createNeighbour(s, plan));
    // the business account's own endpoint answers at once: its deliveries measure the webhooks queue
    const res = await fetch(`${s.base}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${quiet.get('business')!.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: rx.url(QUIET_HOOK), events: ['job.completed'] }),
    });
    const hook = (await res.json()) as { id: number };
    assert.equal(res.status, 201, JSON.stringify(hook));
    quietHook = hook.id;
  });
  after(async () => {
    await s?.stop();
    await rx?.close();
    await fx?.close();
  });

  /** Seconds from each job's completion to its first delivery at the business account's endpoint. */
  async function deliveryDelays(ids: string[]): Promise<{ seconds: number[]; breakdown: string[] }> {
    const arrivedFor = (id: string) => rx.received.find((r) => r.path === QUIET_HOOK && r.body.includes(id));
    await waitFor('deliveries to the business endpoint', async () => ids.every(arrivedFor) || undefined, 5 * 60_000, 200);
    const rows = await jobRows(s, ids);
    const completedAt = (id: string) => Number(rows.find((r) => r.id === id)!.completed_at);
    // each delivery's workflow: its start after the job's completion, then each task's wait + run, ms
    const breakdown = await historyBreakdown(s, ids, { workflowId: (id) => `webhook-${id}-job.completed-ep${quietHook}`, since: completedAt });
    return { seconds: ids.map((id) => (arrivedFor(id)!.at - completedAt(id)) / 1000), breakdown };
  }

  it(`each quiet account's thumbnails take at most 3x their idle time + 2 s during a burst of ${BURST} jobs with slow endpoints; the burst completes, its ledger exact, no job waiting on a delivery`, async () => {
    const thumbnails = (plan: string) => neighbourThumbnails(s, quiet.get(plan)!, fx.url('/no-range/v720.mp4'));
    const idle = new Map<string, { ids: string[]; seconds: number[] }>();
    for (const plan of QUIET_PLANS) idle.set(plan, await thumbnails(plan));

    for (let i = 0; i < ENDPOINTS; i++) {
      rx.delay(`/slow-${i}`, ENDPOINT_SECONDS * 1000);
      const hook = await s.api('POST', '/v1/webhooks', { url: rx.url(`/slow-${i}`), events: ['job.completed'] });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
    }
    rx.delay('/slow-job', ENDPOINT_SECONDS * 1000);
    const balanceBefore = (await s.api('GET', '/v1/account')).body.balance as number;
    const t0 = Date.now();
    const burst = await submitBurst(s, { accountId: s.accountId, key: s.key }, BURST, '/v1/fingerprint', { url: fx.url('/slow-first-byte/v480.mp4'), webhook_url: rx.url('/slow-job') });
    const submitted = (Date.now() - t0) / 1000;
    const during = new Map<string, { ids: string[]; seconds: number[]; burstLeft: number }>();
    for (const plan of QUIET_PLANS) {
      const burstLeft = (await jobRows(s, burst)).filter((r) => r.status !== 'completed' && r.status !== 'failed').length;
      during.set(plan, { ...(await thumbnails(plan)), burstLeft });
    }

    const rows = await waitJobsEnded(s, 'the burst', burst, 30 * 60_000);
    // the burst's deliveries (6 a job, each endpoint 5 s) are still queued: the business account's next
    // thumbnails' deliveries go to its own endpoint past them
    const burstDeliveries = () => rx.received.filter((r) => r.path.startsWith('/slow-')).length;
    const deliveriesLeft = BURST * (ENDPOINTS + 1) - burstDeliveries();
    const afterBurst = await thumbnails('business');
    const burstSeconds = (Math.max(...rows.map((r) => Number(r.completed_at))) - t0) / 1000;
    console.log(`      the enterprise burst of ${BURST} fingerprints (source silent ${FIRST_BYTE_MS / 1000} s, Range ignored) took ${burstSeconds.toFixed(0)} s, submitted in ${submitted.toFixed(1)} s`);
    const breakdowns = new Map<string, string[]>();
    for (const plan of QUIET_PLANS) {
      const [i, d] = [idle.get(plan)!, during.get(plan)!];
      const worst = Math.max(...d.seconds.map((x, k) => x / i.seconds[k]!));
      console.log(`      ${plan}: thumbnails idle ${i.seconds.map((x) => x.toFixed(1)).join(', ')} s; during the burst (${d.burstLeft} of its jobs unfinished when they came) ${d.seconds.map((x) => x.toFixed(1)).join(', ')} s, at most ${worst.toFixed(1)}x`);
      // where each quiet job's time went: every step's wait in its queue (schedule to start) + its run, in ms
      for (const line of await historyBreakdown(s, i.ids)) console.log(`        idle ${line}`);
      const lines = await historyBreakdown(s, d.ids);
      breakdowns.set(plan, lines);
      for (const line of lines) console.log(`        during ${line}`);
    }
    const { seconds: idleDelays, breakdown: idleDeliveries } = await deliveryDelays(idle.get('business')!.ids);
    const { seconds: afterDelays, breakdown: afterDeliveries } = await deliveryDelays(afterBurst.ids);
    console.log(`      business: deliveries to its endpoint ${idleDelays.map((x) => x.toFixed(1)).join(', ')} s after completion idle; ${afterDelays.map((x) => x.toFixed(1)).join(', ')} s with ${deliveriesLeft} of the burst's ${BURST * (ENDPOINTS + 1)} deliveries to slow endpoints still to go (${BURST * (ENDPOINTS + 1) - burstDeliveries()} once they had arrived)`);
    for (const line of idleDeliveries) console.log(`        idle delivery ${line}`);
    for (const line of afterDeliveries) console.log(`        during delivery ${line}`);
    // and the burst's first jobs: their steps wait on the silent source
    for (const line of await historyBreakdown(s, burst.slice(0, 3))) console.log(`        burst ${line}`);
    for (const plan of QUIET_PLANS) {
      const [i, d] = [idle.get(plan)!, during.get(plan)!];
      assert.ok(d.burstLeft > 0, `the burst was still running when the ${plan} account's thumbnails came`);
      for (const [k, x] of d.seconds.entries()) assert.ok(x <= 3 * i.seconds[k]! + 2, `${plan} thumbnail ${k}: ${x.toFixed(1)} s during the burst against ${i.seconds[k]!.toFixed(1)} s idle; where its time went (queue wait + run, ms): ${breakdowns.get(plan)![k]}`);
    }

    assert.ok(deliveriesLeft > 0, "the burst's deliveries were still queued when the business account's last thumbnails completed");
    for (const [k, x] of afterDelays.entries()) assert.ok(x <= 3 * idleDelays[k]! + 2, `business delivery ${k}: ${x.toFixed(1)} s after completion during the burst's deliveries against ${idleDelays[k]!.toFixed(1)} s idle; its workflow (start after the completion, then each task's wait + run, ms): ${afterDeliveries[k]}`);

    assert.deepEqual([...new Set(rows.map((r) => r.status))], ['completed'], 'every job of the burst completed');
    const ledger = await ledgerByJob(serveDatabase(s));
    for (const id of burst) assert.deepEqual(ledger.get(id), { charges: 1, refunds: 0 }, id);
    assert.equal((await s.api('GET', '/v1/account')).body.balance, balanceBefore - BURST, 'the balance moved by exactly the burst');

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
