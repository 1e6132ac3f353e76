import assert from 'node:assert/strict';
import path from 'node:path';
import { startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { ledgerByJob, querySqlite } from './helpers/ledger';
import { startServeStack, type ServeStack } from './helpers/serve-stack';

const CYCLES = 5;
const BURST = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Crash injection: `serve` (API, workers, dev server, every tool) is SIGKILLed at a random point of
 * a burst of creates, five times. The committed job row is the outbox entry, so every accepted job
 * must run — none pending a minute after a restart — and the ledger must come out exact.
 */
describe('durability: serve SIGKILLed at random points during bursts of creates (real stack, default reconciler settings)', function () {
  this.timeout(30 * 60_000);
  let fx: FixturePlatform;
  let s: ServeStack;
  const pendingAfterRestart: number[] = [];
  const secondsToDrain: number[] = [];
  let accepted = 0;
  let refused503 = 0;
  const otherAnswers: string[] = [];

  before(async () => {
    fx = await startFixturePlatform();
    s = await startServeStack({ name: 'durable', plan: 'business' });
  });
  after(async () => {
    await s?.stop();
    await fx?.close();
  });

  const db = () => path.join(s.dataDir, 'mediasvc.sqlite');
  const pendingCount = async () => (await querySqlite<{ n: number }>(db(), "select count(*) as n from jobs where status = 'pending'"))[0]!.n;

  it(`${CYCLES} kills mid-burst: no job is pending 60 s after a restart, and the ledger is exact`, async () => {
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      // a burst of creates, alternating quick job types; the kill lands somewhere inside it
      const burst = Array.from({ length: BURST }, (_, i) =>
        s
          .api('POST', i % 2 ? '/v1/fingerprint' : '/v1/preview', i % 2 ? { url: fx.url('/media/v480.mp4'), hash_size: 8 } : { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail', width: 160 })
          .then((r) => {
            if (r.status === 202) accepted++;
            else if (r.status === 503 && r.headers.get('retry-after')) refused503++;
            else otherAnswers.push(`${r.status} ${JSON.stringify(r.body)}`);
          })
          .catch(() => undefined), // the connection dies with the process
      );
      await sleep(50 + Math.floor(Math.random() * 1500));
      await s.crash();
      await Promise.all(burst);
      const restartedAt = Date.now();
      pendingAfterRestart.push(await pendingCount());
      // within a minute of the restart every accepted job has left pending (running or done)
      for (;;) {
        if ((await pendingCount()) === 0) break;
        assert.ok(Date.now() - restartedAt < 60_000, `jobs still pending 60 s after restart ${cycle + 1}: ${await pendingCount()}`);
        await sleep(500);
      }
      secondsToDrain.push((Date.now() - restartedAt) / 1000);
    }

    // let everything finish, then check every job and the balance
    const deadline = Date.now() + 10 * 60_000;
    for (;;) {
      const open = (await querySqlite<{ n: number }>(db(), "select count(*) as n from jobs where status in ('pending', 'processing')"))[0]!.n;
      if (open === 0) break;
      assert.ok(Date.now() < deadline, `${open} jobs still open`);
      await sleep(1000);
    }
    const jobs = await querySqlite<{ id: string; status: string; credits_charged: number; error_message: string | null }>(db(), 'select id, status, credits_charged, error_message from jobs');
    const ledger = await ledgerByJob(db());
    assert.ok(jobs.length >= accepted, `every accepted job has a row (${jobs.length} rows, ${accepted} accepted)`);
    for (const j of jobs) {
      const l = ledger.get(j.id) ?? { charges: 0, refunds: 0 };
      assert.equal(l.charges, 1, `job ${j.id} charged once`);
      assert.equal(l.refunds, j.status === 'failed' ? 1 : 0, `job ${j.id} (${j.status}: ${j.error_message ?? ''}) refunded ${l.refunds} times`);
    }
    const completed = jobs.filter((j) => j.status === 'completed');
    assert.equal(await s.credits(), 35_000 - completed.reduce((n, j) => n + j.credits_charged, 0), 'the balance is what the completed jobs cost');
    // the jobs are quick and their sources fine: a crash must not turn them into failures
    assert.equal(completed.length, jobs.length, `failed: ${jobs.filter((j) => j.status === 'failed').map((j) => j.error_message).join(' | ')}`);
    assert.deepEqual(otherAnswers, [], 'every create answered was 202, or 503 with Retry-After');
    console.log(
      `      crash injection: ${CYCLES} kills, ${jobs.length} jobs (${accepted} answered 202 before a kill), ${completed.length} completed, 0 failed, 0 refunded; ` +
        `${refused503} answered 503 with Retry-After; ` +
        `pending right after each restart: ${pendingAfterRestart.join(', ')}; seconds until none pending: ${secondsToDrain.map((x) => x.toFixed(1)).join(', ')}`,
    );
  });
});
