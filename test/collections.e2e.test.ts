// Batches and subscriptions end to end on one `serve` stack: a 60-episode podcast feed on loopback
// listed and run (with a date bound, a 404 in the middle, charges and refunds read from the ledger,
// batch.completed at a receiver), a page with five videos through yt-dlp, a URL list of 10,000, a
// cancel mid-run, a SIGKILL mid-expansion, hostile feeds (an entity bomb, 100,000 items); a
// subscription to a feed that gains episodes (across a restart, paused, deleted) and one to a feed
// that is gone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { dailyEpisodes, SLOW_FEED_MS, startFeedOrigin, type FeedOrigin } from './helpers/feed-origin';
import { ledgerByJob, querySqlite } from './helpers/ledger';
import { waitFor } from './helpers/processes';
import { startServeStack, type ServeStack } from './helpers/serve-stack';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const FIRST_EPISODE = new Date('2026-09-01T08:00:00Z');
/** The subscriptions' interval here (the server's floor is lowered to it). */
const CHECK_EVERY = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('batches and subscriptions (serve, a loopback podcast host)', function () {
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
    s = await startServeStack({ name: 'batches', plan: 'business', env: { SUBSCRIPTION_MIN_CHECK_SECONDS: '1', PLATFORM_BREAKER_THRESHOLD: '2' } });
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

  it('lists a feed served with a wrong content type (text/plain), in chunks of 97 bytes, by what its body is', async () => {
    origin.episodes.set('plain', dailyEpisodes(3, FIRST_EPISODE));
    const created = await s.api('POST', '/v1/batches', { operation: 'list', source: { url: origin.url('/chunked-feed/plain.xml') }, order: 'oldest' });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const batch = await waitBatch(created.body.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch));
    assert.deepEqual(batch.items.map((i: any) => i.url), [1, 2, 3].map((n) => origin.url(`/ep/${n}.wav`)));
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
    console.log(`      the entity bomb was refused ${Date.parse(failed.completed_at) - Date.parse(failed.created_at)} ms after the batch was created (the refusal comes before any parsing)`);
    assert.equal(await s.credits(), before, 'a source that cannot be expanded is refunded');

    origin.episodes.set('huge', dailyEpisodes(100_000, new Date('2000-01-01T00:00:00Z')));
    const huge = await s.api('POST', '/v1/batches', { operation: 'list', source: { url: origin.url('/feed/huge.xml') } });
    const capped = await waitBatch(huge.body.batch_id, 180_000);
    assert.equal(capped.status, 'completed', JSON.stringify({ status: capped.status, error: capped.error }));
    assert.equal(capped.counts.total, 10_000, "the business plan's cap");
    assert.match(capped.note, /100000 items matched; the first 10000 were taken/);
  });

  /** The item jobs of the subscription's batches. */
  async function subscriptionJobs(id: string): Promise<any[]> {
    const batches = (await s.api('GET', '/v1/batches?limit=100')).body.items.filter((b: any) => b.subscription_id === id);
    const jobs: any[] = [];
    for (const b of batches) jobs.push(...(await s.api('GET', `/v1/jobs?batch_id=${b.batch_id}&limit=100`)).body.items);
    return jobs;
  }

  async function subscription(id: string): Promise<any> {
    const res = await s.api('GET', `/v1/subscriptions/${id}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  it('subscribes to a feed: each new episode runs within one interval and exactly once, across a restart; paused runs nothing; delete removes the Schedule', async () => {
    const feed = dailyEpisodes(3, FIRST_EPISODE);
    origin.episodes.set('watched', feed);
    const created = await s.api('POST', '/v1/subscriptions', { url: origin.url('/feed/watched.xml'), operation: 'waveform', check_every: CHECK_EVERY, start_after: 'now' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.subscription_id;
    assert.equal(created.body.paused, false);
    assert.ok(created.body.next_check_at);
    const schedule = temporal.schedule.getHandle(`subscription-${id}`);
    const described = await schedule.describe();
    assert.deepEqual(described.memo, { account_id: s.accountId, operation: 'waveform', url: origin.url('/feed/watched.xml') });

    // the first check records what was already there and runs none of it
    await waitFor('the first check', async () => ((await subscription(id)).items_seen === 3 ? true : undefined), 60_000, 500);
    assert.equal((await subscription(id)).items_run, 0);

    const add = (n: string) => {
      feed.unshift({ guid: `urn:episode:new-${n}`, title: `New ${n}`, published: new Date(), path: `/ep/new-${n}.wav`, seconds: 3 });
      return Date.now();
    };
    const runOf = async (n: string) =>
      waitFor(`new episode ${n} run`, async () => {
        const job = (await subscriptionJobs(id)).find((j) => j.source_url === origin.url(`/ep/new-${n}.wav`));
        return job?.status === 'completed' ? job : undefined;
      }, 120_000, 500);

    const addedAt = add('1');
    const first = await runOf('1');
    const lag = (Date.parse(first.created_at) - addedAt) / 1000;
    console.log(`      episode 1 became a job ${lag.toFixed(1)} s after it was added (check_every ${CHECK_EVERY} s)`);
    // one interval at most before the next check, plus that check's own work on a busy machine
    assert.ok(lag <= CHECK_EVERY + 8, `${lag.toFixed(1)} s is more than one interval and a check`);
    await sleep(3 * CHECK_EVERY * 1000);
    assert.equal((await subscriptionJobs(id)).length, 1, 'three more checks ran nothing again');

    assert.equal(await s.restart(), 0);
    add('2');
    await runOf('2');
    await sleep(2 * CHECK_EVERY * 1000);
    const jobs = await subscriptionJobs(id);
    assert.deepEqual(jobs.map((j) => j.source_url).sort(), [origin.url('/ep/new-1.wav'), origin.url('/ep/new-2.wav')]);
    const read = await subscription(id);
    assert.equal(read.items_run, 2);
    assert.equal(read.items_seen, 5);
    assert.ok(read.last_checked_at);

    const paused = await s.api('PATCH', `/v1/subscriptions/${id}`, { paused: true });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.equal(paused.body.next_check_at, null);
    // the Schedule takes the change as a signal of its own: asked again until it shows it
    await waitFor('the Schedule paused', async () => ((await schedule.describe()).state.paused ? true : undefined), 15_000, 250);
    add('3');
    await sleep(3 * CHECK_EVERY * 1000);
    assert.equal((await subscriptionJobs(id)).length, 2, 'paused: no new jobs');
    assert.equal((await s.api('POST', `/v1/subscriptions/${id}/check`)).status, 409);

    assert.equal((await s.api('DELETE', `/v1/subscriptions/${id}`)).status, 204);
    await assert.rejects(schedule.describe(), ScheduleNotFoundError);
    assert.equal((await s.api('GET', `/v1/subscriptions/${id}`)).status, 404);
  });

  it('a subscription whose feed is gone backs off, shows why, and pauses itself after 5 failed checks with one subscription.paused', async () => {
    const created = await s.api('POST', '/v1/subscriptions', { url: origin.url('/missing/feed.xml'), operation: 'waveform', check_every: 1, webhook_url: receiver.url('/sub-hook') });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.subscription_id;
    const read = await waitFor('paused by failures', async () => {
      const sub = await subscription(id);
      return sub.paused ? sub : undefined;
    }, 120_000, 500);
    assert.match(read.last_error, /HTTP 404/);
    const requests = origin.hits.filter((h) => h === '/missing/feed.xml').length;
    // checks every second would have been ~30 by the fifth failure at backoff 1, 2, 4, 8 s; each check tries twice
    assert.ok(requests <= 12, `${requests} requests for a source that kept failing`);
    await waitFor('the Schedule paused', async () => ((await temporal.schedule.getHandle(`subscription-${id}`).describe()).state.paused ? true : undefined), 15_000, 250);
    const events = await waitFor('subscription.paused', async () => {
      const got = receiver.received.filter((r) => r.path === '/sub-hook' && JSON.parse(r.body).event === 'subscription.paused');
      return got.length ? got : undefined;
    });
    await sleep(3000);
    assert.equal(receiver.received.filter((r) => r.path === '/sub-hook' && JSON.parse(r.body).event === 'subscription.paused').length, 1);
    assert.equal(JSON.parse(events[0]!.body).data.subscription_id, id);
    assert.equal((await s.api('DELETE', `/v1/subscriptions/${id}`)).status, 204);
  });

  // last of the tests that run jobs: it opens the breaker of 127.0.0.1, the host of every origin here
  it("a subscription whose site refuses the service (429) counts against the platform's breaker, and waits for it instead of pausing", async () => {
    const created = await s.api('POST', '/v1/subscriptions', { url: origin.url('/refusing/feed.xml'), operation: 'waveform', check_every: 1 });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.subscription_id;
    const db = path.join(s.dataDir, 'mediasvc.sqlite');
    await waitFor('the breaker open', async () => {
      const [b] = await querySqlite<{ opened_at: unknown }>(db, "select opened_at from platform_breakers where platform = '127.0.0.1'");
      return b?.opened_at ? true : undefined;
    }, 60_000, 250);
    const at = origin.hits.filter((h) => h === '/refusing/feed.xml').length;
    await sleep(5000);
    const read = await subscription(id);
    assert.match(read.last_error, /refusing requests.*429/);
    assert.equal(read.paused, false, 'a refusing platform is waited for, not a reason to give up');
    assert.equal(origin.hits.filter((h) => h === '/refusing/feed.xml').length, at, 'no request while the breaker is open');
    assert.ok(at <= 3, `${at} requests before the breaker opened (threshold 2)`);
    assert.equal((await s.api('DELETE', `/v1/subscriptions/${id}`)).status, 204);
  });

  it('answers bad subscriptions with a 422 that names the field', async () => {
    const url = origin.url('/feed/sixty.xml');
    for (const [body, detail] of [
      [{ url, operation: 'waveform', check_every: 0 }, /check_every must be at least 1 seconds/],
      [{ url, operation: 'list', check_every: 60 }, /operation/],
      [{ url, operation: 'waveform', check_every: 60, start_after: 'yesterday' }, /start_after/],
    ] as [unknown, RegExp][]) {
      const res = await s.api('POST', '/v1/subscriptions', body);
      assert.equal(res.status, 422, JSON.stringify({ body, got: res.body }));
      assert.match(res.body.detail, detail);
    }
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
