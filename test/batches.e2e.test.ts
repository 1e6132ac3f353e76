// Batches end to end on one `serve` stack: a 60-episode podcast feed on loopback listed and run (with
// a date bound, a 404 in the middle, charges and refunds read from the ledger, batch.completed at a
// receiver), a page with five videos through yt-dlp, a URL list of 10,000, a cancel mid-run, and
// hostile feeds (an entity bomb, a feed of 100,000 items).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { dailyEpisodes, SLOW_FEED_MS, startFeedOrigin, type FeedOrigin } from './helpers/feed-origin';
import { ledgerByJob } from './helpers/ledger';
import { waitFor } from './helpers/processes';
import { startServeStack, type ServeStack } from './helpers/serve-stack';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const FIRST_EPISODE = new Date('2026-09-01T08:00:00Z');

describe('batches (serve, a loopback podcast host)', function () {
  this.timeout(600_000);
  let s: ServeStack;
  let origin: FeedOrigin;
  let receiver: Receiver;
  let temporal: Client;
  let dir: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'batches-'));
    const wav = path.join(dir, 'tone.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=3', '-ar', '16000', '-ac', '1', wav]);
    origin = await startFeedOrigin(wav);
    receiver = await startReceiver();
    s = await startServeStack({ name: 'batches', plan: 'business' });
    temporal = new Client({ connection: await Connection.connect({ address: `127.0.0.1:${s.env.TEMPORAL_DEV_PORT}` }) });
  });
  after(async () => {
    await temporal?.connection.close();
    await s?.stop();
    await origin?.close();
    await receiver?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Polls the batch until it has ended; prints where it stood when it did not. */
  async function waitBatch(id: string, timeoutMs = 240_000): Promise<any> {
    let last: any = null;
    try {
      return await waitFor(
        `batch ${id}`,
        async () => {
          last = (await s.api('GET', `/v1/batches/${id}?limit=100`)).body;
          return ['completed', 'cancelled', 'failed'].includes(last.status) ? last : undefined;
        },
        timeoutMs,
        500,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}: ${JSON.stringify({ status: last?.status, counts: last?.counts, error: last?.error })}`);
    }
  }

  /** Every item of the batch, page after page. */
  async function allItems(id: string): Promise<any[]> {
    const items: any[] = [];
    for (let cursor: string | null = null; ; ) {
      const res = await s.api('GET', `/v1/batches/${id}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      items.push(...res.body.items);
      if (!res.body.has_more) return items;
      cursor = res.body.next_cursor;
    }
  }

  async function historyLength(batchId: string): Promise<number> {
    const history = await temporal.workflow.getHandle(`batch-${batchId}`).fetchHistory();
    return history.events?.length ?? 0;
  }

  it('lists a 60-episode feed: every item with its title, date, duration and enclosure, newest first, for 1 credit', async () => {
    origin.episodes.set('sixty', dailyEpisodes(60, FIRST_EPISODE));
    const before = await s.credits();
    const created = await s.api('POST', '/v1/batches', { operation: 'list', source: { url: origin.url('/feed/sixty.xml') } });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal(created.body.status, 'expanding');
    const batch = await waitBatch(created.body.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch));
    assert.deepEqual(batch.counts, { total: 60, pending: 0, processing: 0, completed: 60, failed: 0, skipped: 0 });
    const items = await allItems(batch.batch_id);
    assert.equal(items.length, 60);
    assert.equal(items[0].url, origin.url('/ep/60.wav'));
    assert.equal(items[0].title, 'Episode 60 & friends');
    assert.equal(items[0].published_at, new Date(FIRST_EPISODE.getTime() + 59 * 86_400_000).toISOString());
    assert.equal(items[0].duration, 3);
    assert.equal(items[59].url, origin.url('/ep/1.wav'));
    assert.ok(items.every((i) => i.job_id === null && i.status === 'completed'));
    assert.equal(await s.credits(), before - 1, 'list costs one read');
    assert.equal(origin.hits.filter((h) => h.startsWith('/ep/')).length, 0, 'listing fetches no enclosure');
  });

  it('runs a transcribe batch on the items after a date: exactly those, each charged once, the 404 failed and refunded once, batch.completed once', async () => {
    const episodes = dailyEpisodes(60, FIRST_EPISODE);
    // episode 59's enclosure is gone from the host
    episodes.find((e) => e.guid === 'urn:episode:59')!.path = '/missing/59.wav';
    origin.episodes.set('run', episodes);
    const after = new Date(FIRST_EPISODE.getTime() + 56.5 * 86_400_000).toISOString();
    const before = await s.credits();
    const created = await s.api('POST', '/v1/batches', { operation: 'transcribe', parameters: { model_size: 'tiny', language: 'en' }, source: { url: origin.url('/feed/run.xml') }, after, webhook_url: receiver.url('/batch-hook') });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const batch = await waitBatch(created.body.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch));
    assert.deepEqual(batch.counts, { total: 3, pending: 0, processing: 0, completed: 2, failed: 1, skipped: 0 }, JSON.stringify(batch.items));
    assert.deepEqual(batch.items.map((i: any) => i.title), ['Episode 60 & friends', 'Episode 59 & friends', 'Episode 58 & friends']);
    const failed = batch.items.find((i: any) => i.status === 'failed');
    assert.match(failed.reason, /404|not available/i);

    const jobs = (await s.api('GET', `/v1/jobs?batch_id=${batch.batch_id}&limit=100`)).body.items;
    assert.deepEqual(jobs.map((j: any) => j.job_id).sort(), batch.items.map((i: any) => i.job_id).sort());
    assert.ok(jobs.every((j: any) => j.batch_id === batch.batch_id && j.job_type === 'transcribe'));
    const ledger = await ledgerByJob(path.join(s.dataDir, 'mediasvc.sqlite'));
    for (const job of jobs) assert.deepEqual(ledger.get(job.job_id), { charges: 1, refunds: job.status === 'failed' ? 1 : 0 }, `ledger of ${job.job_id} (${job.status})`);
    const charged = jobs.filter((j: any) => j.status === 'completed').reduce((sum: number, j: any) => sum + j.credits_charged, 0);
    assert.equal(await s.credits(), before - charged);

    const events = await waitFor('batch.completed', async () => {
      const got = receiver.received.filter((r) => r.path === '/batch-hook' && JSON.parse(r.body).event === 'batch.completed');
      return got.length ? got : undefined;
    });
    // a moment more: a second delivery would have come by now
    await new Promise((r) => setTimeout(r, 3000));
    const all = receiver.received.filter((r) => r.path === '/batch-hook' && JSON.parse(r.body).event === 'batch.completed');
    assert.equal(all.length, 1, 'batch.completed once');
    const event = JSON.parse(events[0]!.body);
    assert.equal(event.data.batch_id, batch.batch_id);
    assert.deepEqual(event.data.counts, batch.counts);
    assert.ok(events[0]!.headers['webhook-signature'], 'signed');
    // each item's own events go to the batch's webhook_url too
    assert.equal(receiver.received.filter((r) => r.path === '/batch-hook' && /^job\./.test(JSON.parse(r.body).event)).length, 3);
  });

  it('expands a page with five videos through yt-dlp, and a list of 10,000 URLs with the workflow history bounded', async () => {
    const page = await s.api('POST', '/v1/batches', { operation: 'list', source: { url: origin.url('/five-videos.html') } });
    assert.equal(page.status, 202, JSON.stringify(page.body));
    const listed = await waitBatch(page.body.batch_id);
    assert.equal(listed.status, 'completed', JSON.stringify(listed));
    assert.deepEqual(listed.items.map((i: any) => i.url), [1, 2, 3, 4, 5].map((n) => origin.url(`/clips/${n}.mp4`)));

    const urls = Array.from({ length: 10_000 }, (_, i) => origin.url(`/ep/u${i}.wav`));
    const many = await s.api('POST', '/v1/batches', { operation: 'list', source: { urls }, order: 'oldest' });
    assert.equal(many.status, 202, JSON.stringify(many.body));
    const big = await waitBatch(many.body.batch_id);
    assert.equal(big.counts.total, 10_000);
    const items = await allItems(big.batch_id);
    assert.deepEqual(items.map((i) => i.url), urls);
    const events = await historyLength(big.batch_id);
    assert.ok(events < 100, `the batch workflow's history has ${events} events`);
  });

  it('cancels a running batch: its unfinished jobs end within seconds, each refunded once; waiting items are skipped', async () => {
    origin.episodes.set('stalls', dailyEpisodes(6, FIRST_EPISODE, '/stall'));
    const before = await s.credits();
    const created = await s.api('POST', '/v1/batches', { operation: 'download', parameters: { quality: 'audio' }, source: { url: origin.url('/feed/stalls.xml') } });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const id = created.body.batch_id;
    await waitFor('items processing', async () => {
      const b = (await s.api('GET', `/v1/batches/${id}`)).body;
      return b.counts.processing >= 2 ? b : undefined;
    }, 120_000, 500);
    const started = Date.now();
    const cancelled = await s.api('POST', `/v1/batches/${id}/cancel`);
    assert.ok([200, 202].includes(cancelled.status), JSON.stringify(cancelled.body));
    const batch = await waitBatch(id, 60_000);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(batch.status, 'cancelled', JSON.stringify(batch));
    assert.ok(seconds < 30, `ended ${seconds.toFixed(1)} s after the cancel`);
    assert.equal(batch.counts.processing + batch.counts.pending, 0, JSON.stringify(batch.counts));
    assert.equal(batch.counts.total, 6);
    const jobs = (await s.api('GET', `/v1/jobs?batch_id=${id}&limit=100`)).body.items;
    assert.ok(jobs.length >= 2);
    const ledger = await ledgerByJob(path.join(s.dataDir, 'mediasvc.sqlite'));
    for (const job of jobs) {
      assert.equal(job.status, 'failed');
      assert.deepEqual(ledger.get(job.job_id), { charges: 1, refunds: 1 }, `ledger of ${job.job_id}`);
    }
    assert.equal(batch.counts.skipped, 6 - jobs.length);
    assert.equal(await s.credits(), before, 'everything refunded');
    assert.equal((await s.api('POST', `/v1/batches/${id}/cancel`)).status, 409);
  });

  it('loses no item and runs none twice when the whole tree is SIGKILLed while the source is being expanded', async () => {
    origin.episodes.set('killed', dailyEpisodes(5, FIRST_EPISODE));
    const created = await s.api('POST', '/v1/batches', { operation: 'waveform', source: { url: origin.url('/slow-feed/killed.xml') } });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const id = created.body.batch_id;
    await waitFor('the feed requested', async () => (origin.hits.includes('/slow-feed/killed.xml') ? true : undefined), 60_000, 100);
    assert.equal((await s.api('GET', `/v1/batches/${id}`)).body.status, 'expanding');
    await s.crash();
    const batch = await waitBatch(id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch));
    assert.deepEqual(batch.counts, { total: 5, pending: 0, processing: 0, completed: 5, failed: 0, skipped: 0 }, JSON.stringify(batch.items));
    assert.deepEqual(batch.items.map((i: any) => i.url), [5, 4, 3, 2, 1].map((n) => origin.url(`/ep/${n}.wav`)));
    const jobs = (await s.api('GET', `/v1/jobs?batch_id=${id}&limit=100`)).body.items;
    assert.equal(jobs.length, 5, 'one job per item');
    const ledger = await ledgerByJob(path.join(s.dataDir, 'mediasvc.sqlite'));
    for (const job of jobs) assert.deepEqual(ledger.get(job.job_id), { charges: 1, refunds: 0 }, `ledger of ${job.job_id}`);
    console.log(`      the feed was requested ${origin.hits.filter((h) => h === '/slow-feed/killed.xml').length} times (it takes ${SLOW_FEED_MS / 1000} s to answer)`);
  });

  it('refuses hostile feeds: an entity bomb fails at once, a feed of 100,000 items stops at the cap and says so', async () => {
    const before = await s.credits();
    const bomb = await s.api('POST', '/v1/batches', { operation: 'list', source: { url: origin.url('/bomb.xml') } });
    assert.equal(bomb.status, 202, JSON.stringify(bomb.body));
    const failed = await waitBatch(bomb.body.batch_id, 60_000);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error, /declares XML entities/);
    assert.equal(await s.credits(), before, 'a source that cannot be expanded is refunded');

    origin.episodes.set('huge', dailyEpisodes(100_000, new Date('2000-01-01T00:00:00Z')));
    const huge = await s.api('POST', '/v1/batches', { operation: 'list', source: { url: origin.url('/feed/huge.xml') } });
    const capped = await waitBatch(huge.body.batch_id, 180_000);
    assert.equal(capped.status, 'completed', JSON.stringify({ status: capped.status, error: capped.error }));
    assert.equal(capped.counts.total, 10_000, "the business plan's cap");
    assert.match(capped.note, /100000 items matched; the first 10000 were taken/);
  });

  it('answers bad batches with a 422 that names the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ operation: 'explode', source: { url: origin.url('/feed/sixty.xml') } }, /operation/],
      [{ operation: 'transcribe', parameters: { url: 'https://example.com/x' }, source: { url: origin.url('/feed/sixty.xml') } }, /parameters\.url/],
      [{ operation: 'transcribe', parameters: { model_size: 'enormous' }, source: { url: origin.url('/feed/sixty.xml') } }, /parameters\.model_size/],
      [{ operation: 'list', source: { urls: [] } }, /at least one URL/],
      [{ operation: 'list', source: { url: origin.url('/feed/sixty.xml') }, max_items: 100_000 }, /max_items is more than the business plan's limit of 10000/],
      [{ operation: 'list', source: { url: origin.url('/feed/sixty.xml') }, after: '2026-10-01', before: '2026-09-01' }, /after must be earlier than before/],
    ];
    for (const [body, detail] of cases) {
      const res = await s.api('POST', '/v1/batches', body);
      assert.equal(res.status, 422, JSON.stringify({ body, got: res.body }));
      assert.match(res.body.detail, detail);
    }
    assert.equal((await s.api('GET', '/v1/batches/00000000-0000-4000-8000-000000000000')).status, 404);
  });
});
