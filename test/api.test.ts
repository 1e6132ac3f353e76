import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setKeyActive, deleteKey } from '../accounts/repository';
import { Job } from '../jobs/entity';
import { ledgerSum, refundJob } from '../credits/repository';
import { flushKeyUsage } from '../keys/usage.repository';
import { hitRateLimit, rateLimitsWritten } from '../db/rate-limit.repository';
import { openOrm } from '../db/orm';
import { InfoError } from '../jobs/orchestrator';
import type { DownloadParams } from '../operations/download/spec';
import { JOB_TYPES } from '../operations/registry';
import type { VideoInfo } from '../lib/video-info';
import { createMaintenanceActivities } from '../jobs/maintenance.activities';
import { freshRateWindow, startApiHarness, type ApiHarness } from './helpers/api-harness';
import { Batch, BatchItem } from '../batches/entity';

const SOURCE = 'http://127.0.0.1:9/video.mp4';

const sampleInfo: VideoInfo = {
  url: SOURCE,
  title: 't',
  description: null,
  duration: 4,
  thumbnail: null,
  upload_date: null,
  view_count: null,
  like_count: null,
  channel: null,
  channel_url: null,
  tags: [],
  categories: [],
  subtitles: [],
  chapters: [],
  formats: [],
};

for (const dialect of ['sqlite', 'postgresql'] as const) {
  describe(`API on ${dialect}`, function () {
    let h: ApiHarness;
    before(async () => {
      h = await startApiHarness(dialect);
    });
    after(async () => {
      await h?.close();
    });

    describe('authentication', () => {
      it('401 with WWW-Authenticate when the key is missing, malformed or unknown', async () => {
        for (const headers of [{} as Record<string, string>, { authorization: 'Basic abc' }, { authorization: 'Bearer nope' }, { authorization: `Bearer vc_${'x'.repeat(43)}` }]) {
          const res = await h.request('GET', '/v1/jobs', { headers });
          assert.equal(res.status, 401, JSON.stringify(headers));
          assert.equal(res.headers.get('www-authenticate'), 'Bearer');
          assert.match(res.body.detail, /API key/);
        }
      });

      it('403 for a deactivated key, 200 again once reactivated, 401 once deleted', async () => {
        const a = await h.newAccount();
        await setKeyActive(h.orm.em.fork(), a.keyId, false);
        const res = await h.request('GET', '/v1/jobs', { key: a.key });
        assert.equal(res.status, 403);
        assert.match(res.body.detail, /deactivated/);
        await setKeyActive(h.orm.em.fork(), a.keyId, true);
        assert.equal((await h.request('GET', '/v1/jobs', { key: a.key })).status, 200);
        await deleteKey(h.orm.em.fork(), a.keyId);
        assert.equal((await h.request('GET', '/v1/jobs', { key: a.key })).status, 401);
      });

      it('stores only a hash and the 8-character prefix, and records usage', async () => {
        const a = await h.newAccount();
        await h.request('GET', '/v1/jobs', { key: a.key });
        await h.request('GET', '/v1/jobs', { key: a.key });
        await flushKeyUsage(h.orm.em); // usage is buffered for up to KEY_USAGE_FLUSH_MS
        const conn = h.orm.em.getConnection();
        const [row] = (await conn.execute('select prefix, hash, last_used_at from api_keys where id = ?', [a.keyId])) as { prefix: string; hash: string; last_used_at: unknown }[];
        assert.equal(row!.prefix, a.key.slice(0, 8));
        assert.equal(row!.hash, crypto.createHash('sha256').update(a.key).digest('hex'));
        assert.ok(row!.last_used_at);
        const [usage] = (await conn.execute('select request_count from api_key_usage where key_id = ?', [a.keyId])) as { request_count: number }[];
        assert.equal(Number(usage!.request_count), 2);
        const all = JSON.stringify(await conn.execute('select * from api_keys'));
        assert.ok(!all.includes(a.key), 'the full key must never be stored');
      });
    });

    describe('errors', () => {
      it('404 with detail for unknown routes', async () => {
        const a = await h.newAccount();
        const res = await h.request('GET', '/v1/nope', { key: a.key });
        assert.equal(res.status, 404);
        assert.equal(typeof res.body.detail, 'string');
      });

      it('400 for invalid JSON and for a body that is not an object', async () => {
        const a = await h.newAccount();
        const bad = await h.request('POST', '/v1/download', { key: a.key, rawBody: '{"url":', headers: { 'content-type': 'application/json' } });
        assert.equal(bad.status, 400);
        assert.match(bad.body.detail, /JSON/);
        const arr = await h.request('POST', '/v1/download', { key: a.key, body: [1, 2] });
        assert.equal(arr.status, 400);
        assert.match(arr.body.detail, /JSON object/);
      });

      it('422 with field errors for invalid parameters', async () => {
        const a = await h.newAccount();
        const cases: [unknown, string][] = [
          [{}, 'url'],
          [{ url: SOURCE, quality: '4k' }, 'quality'],
          [{ url: SOURCE, format: 'avi' }, 'format'],
          [{ url: 'ftp://example.com/v.mp4' }, 'url'],
          [{ url: 'not a url' }, 'url'],
          [{ url: SOURCE, quality: 'audio', format: 'mp4' }, 'format'],
          [{ url: SOURCE, clip_start: 'soon' }, 'clip_start'],
          [{ url: SOURCE, webhook_url: 'gopher://x' }, 'webhook_url'],
        ];
        for (const [body, field] of cases) {
          const res = await h.request('POST', '/v1/download', { key: a.key, body });
          assert.equal(res.status, 422, JSON.stringify(body));
          assert.equal(typeof res.body.detail, 'string');
          assert.ok(
            res.body.errors.some((e: { field: string }) => e.field === field),
            `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`,
          );
        }
        assert.equal(await h.balance(a.accountId), 1000, 'rejected requests cost nothing');
      });

      it('validates clip and processing options and never ignores them: echoed in parameters, processing costs 2', async () => {
        const a = await h.newAccount();
        const bad = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE, clip_start: '00:05', clip_end: '4' } });
        assert.equal(bad.status, 422);
        assert.match(bad.body.detail, /clip_end/);
        const res = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE, clip_start: '00:01', clip_end: 3.5, processing: ['normalize'] } });
        assert.equal(res.status, 202);
        assert.equal(res.body.credits_charged, 2);
        const job = await h.request('GET', `/v1/jobs/${res.body.job_id}`, { key: a.key });
        assert.equal(job.body.parameters.clip_start, '00:01');
        assert.equal(job.body.parameters.clip_end, '3.5');
        assert.deepEqual(job.body.parameters.processing, ['normalize']);
        assert.equal(await h.balance(a.accountId), 998);
      });

      it('422 for GET /v1/jobs with a limit out of 1..100 or a bad cursor', async () => {
        const a = await h.newAccount();
        for (const q of ['limit=0', 'limit=101', 'limit=abc', 'status=done', 'job_type=x', 'cursor=zzz']) {
          const res = await h.request('GET', `/v1/jobs?${q}`, { key: a.key });
          assert.equal(res.status, 422, q);
        }
      });
    });

    describe('private addresses', () => {
      it('refuses sources and webhook targets on private networks unless allowed', async () => {
        const a = await h.newAccount();
        const saved = h.config.allowPrivateNetwork;
        h.config.allowPrivateNetwork = false;
        try {
          for (const url of ['http://127.0.0.1/v.mp4', 'http://10.1.2.3/v.mp4', 'http://[::1]/v.mp4', 'http://169.254.169.254/latest', 'http://100.64.0.1/x', 'http://localhost/v.mp4']) {
            const res = await h.request('POST', '/v1/download', { key: a.key, body: { url } });
            assert.equal(res.status, 422, url);
            assert.match(res.body.detail, /private or reserved/);
          }
          const wh = await h.request('POST', '/v1/download', { key: a.key, body: { url: 'http://93.184.215.14/v.mp4', webhook_url: 'http://192.168.1.5/hook' } });
          assert.equal(wh.status, 422);
          assert.match(wh.body.detail, /webhook_url/);
        } finally {
          h.config.allowPrivateNetwork = saved;
        }
      });
    });

    describe('jobs and credits', () => {
      it('202 with Location, a pending job, the charge, and the workflow started', async () => {
        const a = await h.newAccount();
        const res = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE, quality: '720p', format: 'mp4', webhook_url: 'http://127.0.0.1:9/hook' } });
        assert.equal(res.status, 202);
        assert.deepEqual(Object.keys(res.body).sort(), ['created_at', 'credits_charged', 'job_id', 'job_type', 'status']);
        assert.equal(res.body.status, 'pending');
        assert.equal(res.body.credits_charged, 1);
        assert.equal(res.body.job_type, 'download');
        assert.equal(res.headers.get('location'), `/v1/jobs/${res.body.job_id}`);
        assert.equal(await h.balance(a.accountId), 999);
        const started = h.orchestrator.started.find((s) => s.jobId === res.body.job_id);
        assert.ok(started);
        assert.equal(started.jobType, 'download');
        assert.equal((started.params as DownloadParams).quality, '720p');

        const job = await h.request('GET', `/v1/jobs/${res.body.job_id}`, { key: a.key });
        assert.equal(job.status, 200);
        assert.equal(job.body.status, 'pending');
        assert.equal(job.body.download_url, null);
        assert.deepEqual(job.body.parameters, { url: SOURCE, quality: '720p', format: 'mp4', clip_start: null, clip_end: null, processing: null, subtitles: null, webhook_url: 'http://127.0.0.1:9/hook' });
        const row = await h.orm.em.fork().findOneOrFail(Job, res.body.job_id);
        assert.equal(row.webhookUrl, 'http://127.0.0.1:9/hook');
      });

      it('402 naming the cost and balance when credits are short', async () => {
        const a = await h.newAccount('starter', 0);
        const res = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE } });
        assert.equal(res.status, 402);
        assert.match(res.body.detail, /costs 1 credit but the balance is 0/);
      });

      it('never lets concurrent requests drive the balance below zero', async () => {
        const a = await h.newAccount('business', 3);
        const results = await Promise.all(Array.from({ length: 12 }, () => h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE } })));
        const statuses = results.map((r) => r.status).sort();
        assert.equal(statuses.filter((s) => s === 202).length, 3, statuses.join(','));
        assert.equal(statuses.filter((s) => s === 402).length, 9, statuses.join(','));
        assert.equal(await h.balance(a.accountId), 0);
        assert.equal(await ledgerSum(h.orm.em.fork(), a.accountId), 0, 'the balance is the sum of the ledger');
      });

      it('refunds a failed job exactly once', async () => {
        const a = await h.newAccount();
        const res = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE } });
        assert.equal(await h.balance(a.accountId), 999);
        const results = await Promise.all([1, 2, 3].map(() => refundJob(h.orm.em.fork(), a.accountId, res.body.job_id, 1)));
        assert.deepEqual(results.filter(Boolean).length, 1);
        assert.equal(await h.balance(a.accountId), 1000);
        assert.equal(await ledgerSum(h.orm.em.fork(), a.accountId), 1000, 'the balance is the sum of the ledger');
      });

      it('an accepted job survives the job engine being down: 202, charged, pending, then started by the reconciler', async () => {
        const a = await h.newAccount();
        h.orchestrator.failStart = new Error('connection refused');
        let jobId: string;
        try {
          const res = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE } });
          assert.equal(res.status, 202, res.text);
          jobId = res.body.job_id as string;
        } finally {
          h.orchestrator.failStart = null;
        }
        assert.equal(await h.balance(a.accountId), 999, 'the charge stands: the job is accepted, not lost');
        assert.equal((await h.request('GET', `/v1/jobs/${jobId}`, { key: a.key })).body.status, 'pending');
        assert.ok(!h.orchestrator.started.some((j) => j.jobId === jobId));
        // the reconciler (a Temporal Schedule in production) starts every job still pending
        const maintenance = createMaintenanceActivities({ orm: h.orm, storage: h.storage, startJob: (input) => h.orchestrator.startJob(input) });
        const first = await maintenance.startStrandedJobs({ olderThanSeconds: 0 });
        assert.ok(first.started >= 1, JSON.stringify(first));
        const started = h.orchestrator.started.find((j) => j.jobId === jobId);
        assert.ok(started, 'started from the row alone');
        assert.equal(started.jobType, 'download');
        assert.equal(started.accountId, a.accountId);
        assert.equal(started.params.url, SOURCE);
        // starting is idempotent: a second pass starts nothing new for it
        await maintenance.startStrandedJobs({ olderThanSeconds: 0 });
        assert.equal(h.orchestrator.started.filter((j) => j.jobId === jobId).length, 1);
      });

      it("never shows another account's job", async () => {
        const a = await h.newAccount();
        const b = await h.newAccount();
        const res = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE } });
        const other = await h.request('GET', `/v1/jobs/${res.body.job_id}`, { key: b.key });
        assert.equal(other.status, 404);
        assert.match(other.body.detail, /No job/);
        assert.equal((await h.request('GET', '/v1/jobs', { key: b.key })).body.items.length, 0);
        assert.equal((await h.request('GET', `/v1/jobs/${crypto.randomUUID()}`, { key: a.key })).status, 404);
        assert.equal((await h.request('GET', '/v1/jobs/not-a-uuid', { key: a.key })).status, 404);
      });

      it("an ended job's read, kept for its next poll, is still never shown to another account", async () => {
        const a = await h.newAccount();
        const b = await h.newAccount();
        const res = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE } });
        await h.orm.em.fork().getConnection().execute(`update jobs set status = 'failed', error_message = 'the source went away', failure_kind = 'unavailable' where id = ?`, [res.body.job_id]);
        const first = await h.request('GET', `/v1/jobs/${res.body.job_id}`, { key: a.key });
        assert.deepEqual([first.status, first.body.status, first.body.error_message], [200, 'failed', 'the source went away']);
        const other = await h.request('GET', `/v1/jobs/${res.body.job_id}`, { key: b.key });
        assert.equal(other.status, 404, JSON.stringify(other.body));
        const again = await h.request('GET', `/v1/jobs/${res.body.job_id.toUpperCase()}`, { key: a.key });
        assert.deepEqual(again.body, first.body);
      });
    });

    describe('account and cancel (beyond the contract)', () => {
      it('GET /v1/account: plan, limit, balance, allowance, next top-up and this month\'s usage by job type', async () => {
        const a = await h.newAccount('pro', 100);
        const info = sampleInfo;
        h.orchestrator.info = async () => info;
        assert.equal((await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE, processing: ['normalize'] } })).status, 202);
        assert.equal((await h.request('POST', '/v1/fingerprint', { key: a.key, body: { url: SOURCE } })).status, 202);
        assert.equal((await h.request('GET', `/v1/info?url=${encodeURIComponent(SOURCE)}`, { key: a.key })).status, 200);
        const res = await h.request('GET', '/v1/account', { key: a.key });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.plan, 'pro');
        assert.equal(res.body.rate_limit_per_minute, 200);
        assert.equal(res.body.monthly_credits, 2000);
        assert.equal(res.body.balance, 96);
        assert.equal(res.body.balance, await h.balance(a.accountId));
        // every job type is listed, with what it used: here two downloads, a fingerprint and an info read
        assert.deepEqual(res.body.usage_this_month, { ...Object.fromEntries(JOB_TYPES.map((t) => [t, 0])), download: 2, fingerprint: 1, info: 1 });
        const next = new Date(res.body.next_topup_at);
        assert.equal(next.getUTCDate(), 1);
        assert.ok(next.getTime() > Date.now() && next.getTime() - Date.now() <= 31 * 86_400_000);
        // a refund gives the credits back in the usage too
        const job = await h.orm.em.fork().findOneOrFail(Job, { accountId: a.accountId, jobType: 'fingerprint' });
        await refundJob(h.orm.em.fork(), a.accountId, job.id, job.creditsCharged);
        assert.equal((await h.request('GET', '/v1/account', { key: a.key })).body.usage_this_month.fingerprint, 0);
        assert.equal((await h.request('GET', '/v1/account')).status, 401);
      });

      it('POST /v1/jobs/{id}/cancel: asks the job engine to cancel a running job, 409 for a finished one, 404 for others\' jobs', async () => {
        const a = await h.newAccount('pro', 100);
        const b = await h.newAccount('pro', 100);
        const created = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE } });
        const id = created.body.job_id as string;
        assert.equal((await h.request('POST', `/v1/jobs/${id}/cancel`, { key: b.key })).status, 404);
        assert.equal((await h.request('POST', `/v1/jobs/${crypto.randomUUID()}/cancel`, { key: a.key })).status, 404);
        // the stub engine records the request; the job ends only when its workflow ends it
        const pending = await h.request('POST', `/v1/jobs/${id}/cancel`, { key: a.key });
        assert.equal(pending.status, 202, pending.text);
        assert.equal(pending.body.job_id, id);
        assert.deepEqual(h.orchestrator.cancelled, [id]);
        const em = h.orm.em.fork();
        const row = await em.findOneOrFail(Job, id);
        row.status = 'completed';
        await em.flush();
        const done = await h.request('POST', `/v1/jobs/${id}/cancel`, { key: a.key });
        assert.equal(done.status, 409);
        assert.match(done.body.detail, /already completed; only pending or processing jobs can be cancelled/);
        assert.equal(h.orchestrator.cancelled.length, 1);
      });
    });

    describe('Idempotency-Key', () => {
      it('runs a create call once per key: a retry replays the response, another body gets 409', async () => {
        const a = await h.newAccount();
        const headers = { 'idempotency-key': `order-${crypto.randomUUID()}` };
        const body = { url: SOURCE, quality: '480p' };
        const first = await h.request('POST', '/v1/download', { key: a.key, body, headers });
        assert.equal(first.status, 202);
        const again = await h.request('POST', '/v1/download', { key: a.key, body, headers });
        assert.equal(again.status, 202);
        assert.deepEqual(again.body, first.body);
        assert.equal(again.headers.get('idempotent-replayed'), 'true');
        assert.equal(again.headers.get('location'), `/v1/jobs/${first.body.job_id}`);
        assert.equal(await h.balance(a.accountId), 999, 'charged once');
        assert.equal(h.orchestrator.started.filter((s) => s.jobId === first.body.job_id).length, 1);

        const other = await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE, quality: '720p' }, headers });
        assert.equal(other.status, 409);
        assert.match(other.body.detail, /different request/);

        // keys are per account
        const b = await h.newAccount();
        assert.equal((await h.request('POST', '/v1/download', { key: b.key, body, headers })).status, 202);
      });

      it('does not keep a failed call, so the same key can be retried after fixing the request', async () => {
        const a = await h.newAccount();
        const headers = { 'idempotency-key': crypto.randomUUID() };
        assert.equal((await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE, quality: 'bad' }, headers })).status, 422);
        assert.equal((await h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE }, headers })).status, 202);
      });

      it('charges once when the same key arrives concurrently', async () => {
        const a = await h.newAccount();
        const headers = { 'idempotency-key': crypto.randomUUID() };
        const results = await Promise.all([1, 2, 3, 4].map(() => h.request('POST', '/v1/download', { key: a.key, body: { url: SOURCE }, headers })));
        const ok = results.filter((r) => r.status === 202);
        assert.ok(ok.length >= 1);
        assert.ok(results.every((r) => r.status === 202 || r.status === 409), results.map((r) => r.status).join(','));
        assert.equal(new Set(ok.map((r) => r.body.job_id)).size, 1);
        assert.equal(await h.balance(a.accountId), 999);
      });
    });

    describe('batches and subscriptions: rows and reads on this database', () => {
      it("counts a batch's items by their jobs' status, pages its items, lists its jobs; a subscription's fields and counts", async () => {
        const a = await h.newAccount();
        const urls = ['http://127.0.0.1:9/a.mp4', 'http://127.0.0.1:9/b.mp4', 'http://127.0.0.1:9/c.mp4'];
        const created = await h.request('POST', '/v1/batches', { key: a.key, body: { operation: 'waveform', source: { urls } } });
        assert.equal(created.status, 202, JSON.stringify(created.body));
        const batchId = (created.body as any).batch_id as string;
        // the workflow does not run here: its steps' rows are written as they would be
        const em = h.orm.em.fork();
        const jobIds = [crypto.randomUUID(), crypto.randomUUID()];
        await em.insertMany(BatchItem, urls.map((url, position) => ({ batchId, position, url, identity: url, title: `Item ${position}`, publishedAt: new Date(Date.UTC(2026, 10, position + 1)), duration: 3.5, thumbnail: null, state: position < 2 ? ('created' as const) : ('skipped' as const), jobId: jobIds[position] ?? null, reason: position === 2 ? 'not run: the balance is 0' : null })));
        em.create(Job, { id: jobIds[0]!, accountId: a.accountId, jobType: 'waveform', status: 'completed', sourceUrl: urls[0]!, parameters: {}, creditsCharged: 1, resultData: null, batchId, createdAt: new Date() });
        em.create(Job, { id: jobIds[1]!, accountId: a.accountId, jobType: 'waveform', status: 'processing', sourceUrl: urls[1]!, parameters: {}, creditsCharged: 1, resultData: null, batchId, createdAt: new Date() });
        await em.flush();
        await em.nativeUpdate(Batch, { id: batchId }, { status: 'running' });
        const first = await h.request('GET', `/v1/batches/${batchId}?limit=2`, { key: a.key });
        assert.equal(first.status, 200, JSON.stringify(first.body));
        const b = first.body as any;
        assert.deepEqual(b.counts, { total: 3, pending: 0, processing: 1, completed: 1, failed: 0, skipped: 1 });
        assert.deepEqual(b.items.map((i: any) => [i.status, i.job_id, i.published_at, i.duration]), [['completed', jobIds[0], '2026-11-01T00:00:00.000Z', 3.5], ['processing', jobIds[1], '2026-11-02T00:00:00.000Z', 3.5]]);
        const rest = (await h.request('GET', `/v1/batches/${batchId}?cursor=${encodeURIComponent(b.next_cursor)}`, { key: a.key })).body as any;
        assert.deepEqual(rest.items.map((i: any) => [i.status, i.reason]), [['skipped', 'not run: the balance is 0']]);
        assert.equal(rest.has_more, false);
        const jobs = (await h.request('GET', `/v1/jobs?batch_id=${batchId}`, { key: a.key })).body as any;
        assert.deepEqual(jobs.items.map((j: any) => j.job_id).sort(), [...jobIds].sort());
        assert.ok(jobs.items.every((j: any) => j.batch_id === batchId));
        const other = await h.newAccount();
        assert.equal((await h.request('GET', `/v1/batches/${batchId}`, { key: other.key })).status, 404);
        assert.equal(((await h.request('GET', '/v1/batches', { key: a.key })).body as any).items[0].counts.total, 3);

        const sub = await h.request('POST', '/v1/subscriptions', { key: a.key, body: { url: 'http://127.0.0.1:9/feed.xml', operation: 'waveform', check_every: 900, start_after: '2026-11-01' } });
        assert.equal(sub.status, 201, JSON.stringify(sub.body));
        const subId = (sub.body as any).subscription_id as string;
        assert.equal((sub.body as any).start_after, '2026-11-01T00:00:00.000Z');
        await em.nativeUpdate(Batch, { id: batchId }, { subscriptionId: subId });
        const read = (await h.request('GET', `/v1/subscriptions/${subId}`, { key: a.key })).body as any;
        assert.deepEqual([read.items_seen, read.items_run, read.paused, read.check_every], [0, 2, false, 900]);
        assert.equal(Date.parse(read.next_check_at) % 900_000, 0, 'on a multiple of the interval');
        const paused = await h.request('PATCH', `/v1/subscriptions/${subId}`, { key: a.key, body: { paused: true, check_every: 1800 } });
        assert.deepEqual([(paused.body as any).paused, (paused.body as any).check_every, (paused.body as any).next_check_at], [true, 1800, null]);
        assert.equal((await h.request('POST', `/v1/subscriptions/${subId}/check`, { key: a.key })).status, 409);
        assert.equal((await h.request('PATCH', `/v1/subscriptions/${subId}`, { key: a.key, body: { check_every: 10 } })).status, 422);
        assert.equal((await h.request('DELETE', `/v1/subscriptions/${subId}`, { key: other.key })).status, 404);
        assert.equal((await h.request('DELETE', `/v1/subscriptions/${subId}`, { key: a.key })).status, 204);
        assert.equal((await h.request('GET', `/v1/subscriptions/${subId}`, { key: a.key })).status, 404);
      });
    });

    describe('job listing', () => {
      async function insertJobs(accountId: string, times: number[], extra: Partial<Job> = {}): Promise<string[]> {
        const em = h.orm.em.fork();
        const ids: string[] = [];
        for (const t of times) {
          const id = crypto.randomUUID();
          ids.push(id);
          em.create(Job, { id, accountId, jobType: 'download', status: 'completed', sourceUrl: SOURCE, parameters: {}, creditsCharged: 1, resultData: null, createdAt: new Date(t), ...extra });
        }
        await em.flush();
        return ids;
      }

      it('pages newest first by (created_at, job_id) and stays consistent while jobs are added and deleted', async () => {
        const a = await h.newAccount();
        const base = Date.UTC(2026, 0, 1);
        // 25 jobs, with several sharing a timestamp so the id tie-break matters
        const times = Array.from({ length: 25 }, (_, i) => base + Math.floor(i / 3) * 1000);
        const ids = await insertJobs(a.accountId, times);
        const expected = ids
          .map((id, i) => ({ id, t: times[i]! }))
          .sort((x, y) => y.t - x.t || (x.id < y.id ? 1 : -1))
          .map((x) => x.id);

        const seen: string[] = [];
        let cursor: string | null = null;
        let page = 0;
        let deleted: string | null = null;
        for (;;) {
          const qs: string = `limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const res = await h.request('GET', `/v1/jobs?${qs}`, { key: a.key });
          assert.equal(res.status, 200);
          seen.push(...res.body.items.map((j: { job_id: string }) => j.job_id));
          if (!res.body.has_more) {
            assert.equal(res.body.next_cursor, null);
            break;
          }
          cursor = res.body.next_cursor;
          if (page++ === 0) {
            // between pages: a new job arrives and one not yet seen is deleted
            await insertJobs(a.accountId, [Date.now()]);
            deleted = expected[15]!;
            await h.orm.em.fork().nativeDelete(Job, { id: deleted });
          }
        }
        assert.deepEqual(seen, expected.filter((id) => id !== deleted));
      });

      it('filters by status and job_type and bounds limit', async () => {
        const a = await h.newAccount();
        await insertJobs(a.accountId, [1, 2, 3]);
        await insertJobs(a.accountId, [4, 5], { status: 'failed' });
        const failed = await h.request('GET', '/v1/jobs?status=failed', { key: a.key });
        assert.equal(failed.body.items.length, 2);
        assert.ok(failed.body.items.every((j: { status: string }) => j.status === 'failed'));
        assert.equal((await h.request('GET', '/v1/jobs?job_type=preview', { key: a.key })).body.items.length, 0);
        const one = await h.request('GET', '/v1/jobs?limit=1', { key: a.key });
        assert.equal(one.body.items.length, 1);
        assert.equal(one.body.has_more, true);
        const hundred = await h.request('GET', '/v1/jobs?limit=100', { key: a.key });
        assert.equal(hundred.body.items.length, 5);
        for (const field of ['job_id', 'job_type', 'status', 'source_url', 'credits_charged', 'created_at']) assert.ok(field in hundred.body.items[0], field);
      });
    });

    describe('rate limits', () => {
      it('sends the headers on every response and 429 with Retry-After past the plan limit', async () => {
        const a = await h.newAccount('free');
        await freshRateWindow();
        let last;
        for (let i = 1; i <= 10; i++) {
          last = await h.request('GET', '/v1/jobs', { key: a.key });
          assert.equal(last.status, 200);
          assert.equal(last.headers.get('x-ratelimit-limit'), '10');
          assert.equal(last.headers.get('x-ratelimit-remaining'), String(10 - i));
          assert.ok(Number(last.headers.get('x-ratelimit-reset')) > Date.now() / 1000);
        }
        const over = await h.request('GET', '/v1/jobs', { key: a.key });
        assert.equal(over.status, 429);
        assert.ok(Number(over.headers.get('retry-after')) >= 1 && Number(over.headers.get('retry-after')) <= 60);
        assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
        assert.match(over.body.detail, /10 requests per minute/);
        // another key of a bigger plan is counted separately
        const b = await h.newAccount('pro');
        const ok = await h.request('GET', '/v1/jobs', { key: b.key });
        assert.equal(ok.status, 200);
        assert.equal(ok.headers.get('x-ratelimit-limit'), '200');
      });

      it('concurrent hits of many buckets, written together, each get their own place in their window: none lost, none counted twice', async () => {
        const now = Date.now();
        const buckets = Array.from({ length: 7 }, () => `test:${crypto.randomUUID()}`);
        // 7 buckets x 15 hits at once, one of them counting 3 (an MCP batch), and one in the next minute
        const hits = buckets.flatMap((b, i) => Array.from({ length: 15 }, (_, j) => ({ b, count: i === 0 && j === 4 ? 3 : 1, at: i === 1 && j === 14 ? now + 60_000 : now })));
        const results = await Promise.all(hits.map((x) => hitRateLimit(h.orm.em.fork(), x.b, 10, x.at, x.count)));
        for (const [i, b] of buckets.entries()) {
          const mine = results.filter((_, k) => hits[k]!.b === b && hits[k]!.at === now);
          const expected = i === 0 ? 17 : i === 1 ? 14 : 15;
          // in order of arrival: totals climb by each hit's count and end at the window's full count
          let total = 0;
          mine.forEach((r, k) => assert.equal(r.total, (total += hits.filter((x) => x.b === b && x.at === now)[k]!.count), `bucket ${i}`));
          assert.equal(total, expected, `bucket ${i}`);
          assert.deepEqual(mine.map((r) => r.exceeded), mine.map((r) => r.total > 10), `bucket ${i}`);
          const stored = (await h.orm.em.getConnection().execute('select sum(count) as n from rate_limit_counters where bucket = ?', [b])) as { n: number | string }[];
          assert.equal(Number(stored[0]!.n), i === 1 ? 15 : expected, `bucket ${i} as stored`);
        }
        const next = results[hits.findIndex((x) => x.at !== now)]!;
        assert.equal(next.total, 1, 'the next minute is a window of its own');
      });

      it('two API processes on one database share a window: a process learns the other\'s hits at its next write, and the stored count holds every hit', async () => {
        const other = await openOrm(h.config, { migrate: false, warn: () => undefined });
        try {
          const b = `test:${crypto.randomUUID()}`;
          const now = Date.now();
          const stored = async () => Number(((await h.orm.em.getConnection().execute('select sum(count) as n from rate_limit_counters where bucket = ?', [b])) as { n: number | string }[])[0]!.n);
          const here = (): Promise<number> => hitRateLimit(h.orm.em.fork(), b, 10, now).then((w) => w.total);
          const there = (): Promise<number> => hitRateLimit(other.em.fork(), b, 10, now).then((w) => w.total);
          // a window's first hit in a process waits for its write; the next ones are counted on top of it
          assert.deepEqual([await here(), await here(), await here(), await here()], [1, 2, 3, 4]);
          await rateLimitsWritten(h.orm.em);
          assert.equal(await stored(), 4);
          // the other process's first hit learns what is stored
          assert.deepEqual([await there(), await there()], [5, 6]);
          await rateLimitsWritten(other.em);
          // this process sees those two after its next write
          assert.equal(await here(), 5);
          await rateLimitsWritten(h.orm.em);
          assert.equal(await here(), 8);
          await rateLimitsWritten(h.orm.em);
          assert.equal(await stored(), 8, 'every hit of both processes is stored once');
        } finally {
          await other.close();
        }
      });

      it('answers a hit of a known window while another connection holds the row locked, and writes it once the lock is gone', async () => {
        const other = await openOrm(h.config, { migrate: false, warn: () => undefined });
        try {
          const b = `test:${crypto.randomUUID()}`;
          const now = Date.now();
          assert.equal((await hitRateLimit(h.orm.em.fork(), b, 10, now)).total, 1);
          await rateLimitsWritten(h.orm.em);
          let locked!: () => void;
          let release!: () => void;
          const lockTaken = new Promise<void>((r) => (locked = r));
          const released = new Promise<void>((r) => (release = r));
          const holder = other.em.transactional(async (tx) => {
            // SQLite: the database's write lock; PostgreSQL: the row's
            await tx.getConnection().execute('update rate_limit_counters set count = count where bucket = ?', [b], 'run', tx.getTransactionContext());
            locked();
            await released;
          });
          await lockTaken;
          // outside the transaction's async context: both ORMs share MikroORM's default context name
          const answered = await Promise.all([1, 2, 3].map(() => hitRateLimit(h.orm.em.fork(), b, 10, now).then((w) => w.total)));
          release();
          await holder;
          assert.deepEqual(answered, [2, 3, 4], 'answered while the lock was held, in order of arrival');
          await rateLimitsWritten(h.orm.em);
          const rows = (await h.orm.em.getConnection().execute('select count from rate_limit_counters where bucket = ?', [b])) as { count: number | string }[];
          assert.equal(Number(rows[0]!.count), 4);
        } finally {
          await other.close();
        }
      });

      it('answers 403, not 429, for a deactivated key whose minute is spent', async () => {
        const a = await h.newAccount('free');
        const ip = `198.51.100.${Math.floor(Math.random() * 250)}`;
        await freshRateWindow();
        for (let i = 1; i <= 10; i++) assert.equal((await h.request('GET', '/v1/jobs', { key: a.key, headers: { 'x-forwarded-for': ip } })).status, 200);
        assert.equal((await h.request('GET', '/v1/jobs', { key: a.key, headers: { 'x-forwarded-for': ip } })).status, 429);
        // the same IP's unauthenticated window is spent too, so only authentication can answer 403
        for (let i = 1; i <= 10; i++) await h.request('GET', '/v1/jobs', { headers: { 'x-forwarded-for': ip } });
        await setKeyActive(h.orm.em.fork(), a.keyId, false);
        const res = await h.request('GET', '/v1/jobs', { key: a.key, headers: { 'x-forwarded-for': ip } });
        assert.equal(res.status, 403);
        assert.match(res.body.detail, /deactivated/);
        assert.equal((await h.request('GET', '/v1/jobs', { headers: { 'x-forwarded-for': ip } })).status, 429, 'unknown callers keep the per-IP limit');
      });

      it('answers 403, not 429, for a key deactivated elsewhere (its verification still cached here) whose minute is spent', async () => {
        const a = await h.newAccount('free');
        await freshRateWindow();
        for (let i = 1; i <= 10; i++) assert.equal((await h.request('GET', '/v1/jobs', { key: a.key })).status, 200);
        // as the CLI or another API process deactivates it: in the database, not in this process's cache
        await h.orm.em.fork().getConnection().execute('update api_keys set is_active = ? where id = ?', [false, a.keyId]);
        const res = await h.request('GET', '/v1/jobs', { key: a.key });
        assert.equal(res.status, 403, JSON.stringify(res.body));
        assert.match(res.body.detail, /deactivated/);
      });

      it('counts unauthenticated requests per IP at the Free rate, errors included', async () => {
        // a range of its own: the test before spends a random 198.51.100.x's window in this minute
        const ip = `198.18.0.${Math.floor(Math.random() * 250)}`;
        await freshRateWindow();
        for (let i = 1; i <= 10; i++) {
          const res = await h.request('GET', '/v1/jobs', { headers: { 'x-forwarded-for': ip } });
          assert.equal(res.status, 401);
          assert.equal(res.headers.get('x-ratelimit-limit'), '10');
          assert.equal(res.headers.get('x-ratelimit-remaining'), String(10 - i));
        }
        const over = await h.request('GET', '/v1/jobs', { headers: { 'x-forwarded-for': ip } });
        assert.equal(over.status, 429);
        assert.ok(Number(over.headers.get('retry-after')) >= 1);
        assert.equal((await h.request('GET', '/v1/jobs')).status, 401, 'another IP has its own window');
        // health and the OpenAPI document are never limited, not even for this IP
        for (const p of ['/healthz', '/v1/openapi.json']) {
          const res = await h.request('GET', p, { headers: { 'x-forwarded-for': ip } });
          assert.equal(res.status, 200, p);
          assert.equal(res.headers.get('x-ratelimit-limit'), null, p);
        }
      });
    });

    describe('info', () => {
      it('answers the video info and charges 1 credit only on 200', async () => {
        const a = await h.newAccount();
        h.orchestrator.info = async (url) => ({ ...sampleInfo, url });
        const ok = await h.request('GET', `/v1/info?url=${encodeURIComponent(SOURCE)}`, { key: a.key });
        assert.equal(ok.status, 200);
        assert.equal(ok.body.url, SOURCE);
        assert.equal(await h.balance(a.accountId), 999);

        h.orchestrator.info = async () => {
          throw new InfoError('unsupported', 'No platform handler supports http://x');
        };
        const nf = await h.request('GET', `/v1/info?url=${encodeURIComponent(SOURCE)}`, { key: a.key });
        assert.equal(nf.status, 404);
        assert.match(nf.body.detail, /No platform handler/);
        assert.equal(await h.balance(a.accountId), 999);

        const missing = await h.request('GET', '/v1/info', { key: a.key });
        assert.equal(missing.status, 422);
        const broke = await h.newAccount('starter', 0);
        assert.equal((await h.request('GET', `/v1/info?url=${encodeURIComponent(SOURCE)}`, { key: broke.key })).status, 402);
      });

      it("refuses an account's info read beyond its plan's reads at once with 429 and Retry-After; others and later reads go through", async () => {
        const a = await h.newAccount('free'); // two at once
        const b = await h.newAccount('free');
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        h.orchestrator.info = async (url) => (await gate, { ...sampleInfo, url });
        const read = (key: string) => h.request('GET', `/v1/info?url=${encodeURIComponent(SOURCE)}`, { key });
        const held = [read(a.key), read(a.key)];
        await new Promise((r) => setTimeout(r, 300));
        const third = await read(a.key);
        assert.equal(third.status, 429, JSON.stringify(third.body));
        assert.match(third.body.detail, /2 info reads of this account are already in progress, the most the free plan allows at once/);
        assert.equal(third.headers.get('retry-after'), '1');
        const other = read(b.key); // another account's reads are not counted with A's
        release();
        assert.deepEqual((await Promise.all([...held, other])).map((r) => r.status), [200, 200, 200]);
        assert.equal((await read(a.key)).status, 200, 'a slot frees when a read answers');
        assert.equal(await h.balance(a.accountId), 25 - 3, 'the refused read cost nothing');
      });
    });

    describe('result files', () => {
      async function completedJob(accountId: string, expiresAt: Date): Promise<{ id: string; bytes: Buffer }> {
        const id = crypto.randomUUID();
        const rel = h.storage.outputRelative(id, 'output.mp4');
        const bytes = crypto.randomBytes(2048);
        fs.mkdirSync(path.dirname(h.storage.outputPath(rel)), { recursive: true });
        fs.writeFileSync(h.storage.outputPath(rel), bytes);
        const em = h.orm.em.fork();
        em.create(Job, { id, accountId, jobType: 'download', status: 'completed', sourceUrl: SOURCE, parameters: {}, creditsCharged: 1, resultData: { title: 'Clip "one"' }, outputFile: rel, completedAt: new Date(), expiresAt, createdAt: new Date() });
        await em.flush();
        return { id, bytes };
      }

      it('serves the file at the signed download_url without a key; 410 after expiry; 404 when tampered', async () => {
        const a = await h.newAccount();
        const { id, bytes } = await completedJob(a.accountId, new Date(Date.now() + 3_600_000));
        const job = await h.request('GET', `/v1/jobs/${id}`, { key: a.key });
        assert.match(job.body.download_url, new RegExp(`^${h.baseUrl}/v1/files/`));
        assert.equal(job.body.expires_at, new Date(job.body.expires_at).toISOString());
        const file = await fetch(job.body.download_url, { headers: { 'x-forwarded-for': '192.0.2.1' } });
        assert.equal(file.status, 200);
        assert.equal(file.headers.get('content-type'), 'video/mp4');
        assert.deepEqual(Buffer.from(await file.arrayBuffer()), bytes);

        const token = job.body.download_url.split('/').pop() as string;
        const tampered = token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA');
        assert.equal((await h.request('GET', `/v1/files/${tampered}`)).status, 404);

        const expired = h.links.url(id, new Date(Date.now() - 1000));
        const gone = await fetch(expired, { headers: { 'x-forwarded-for': '192.0.2.2' } });
        assert.equal(gone.status, 410);
        assert.match(((await gone.json()) as { detail: string }).detail, /expired/);
      });

      it('answers a Range with its bytes (206, Content-Range), a suffix range too; 416 past the end; the whole file for several ranges or an If-Range', async () => {
        const a = await h.newAccount();
        const { id, bytes } = await completedJob(a.accountId, new Date(Date.now() + 3_600_000));
        const url = h.links.url(id, new Date(Date.now() + 3_600_000));
        const get = (headers: Record<string, string>) => fetch(url, { headers: { 'x-forwarded-for': '192.0.2.3', ...headers } });
        const whole = await get({});
        assert.equal(whole.headers.get('accept-ranges'), 'bytes');
        await whole.arrayBuffer();

        const cases: [string, number, number][] = [['bytes=0-99', 0, 99], ['bytes=2000-', 2000, 2047], ['bytes=-48', 2000, 2047], ['bytes=100-999999', 100, 2047]];
        for (const [range, start, end] of cases) {
          const part = await get({ range });
          assert.equal(part.status, 206, `${range}: ${part.status}`);
          assert.equal(part.headers.get('content-range'), `bytes ${start}-${end}/2048`, range);
          assert.equal(part.headers.get('content-length'), String(end - start + 1), range);
          assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(start, end + 1), range);
        }

        const past = await get({ range: 'bytes=4096-' });
        assert.equal(past.status, 416);
        assert.equal(past.headers.get('content-range'), 'bytes */2048');
        assert.match(((await past.json()) as { detail: string }).detail, /past the end of the file, which is 2048 bytes/);

        for (const headers of [{ range: 'bytes=0-9,20-29' }, { range: 'bytes=0-9', 'if-range': '"some-etag"' }, { range: 'bytes=9-0' }] as Record<string, string>[]) {
          const res = await get(headers);
          assert.equal(res.status, 200, JSON.stringify(headers));
          assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes, JSON.stringify(headers));
        }
      });

      it('answers 410 for a link whose file is no longer stored, and 404 for a job with no output', async () => {
        const a = await h.newAccount();
        const { id } = await completedJob(a.accountId, new Date(Date.now() + 3_600_000));
        await h.storage.removeOutput(id);
        const res = await fetch(h.links.url(id, new Date(Date.now() + 3_600_000)), { headers: { 'x-forwarded-for': '192.0.2.4' } });
        assert.equal(res.status, 410);
        assert.match(((await res.json()) as { detail: string }).detail, /no longer stored/);

        const pending = crypto.randomUUID();
        const em = h.orm.em.fork();
        em.create(Job, { id: pending, accountId: a.accountId, jobType: 'download', status: 'pending', sourceUrl: SOURCE, parameters: {}, creditsCharged: 1, resultData: null, createdAt: new Date() });
        await em.flush();
        assert.equal((await fetch(h.links.url(pending, new Date(Date.now() + 3_600_000)), { headers: { 'x-forwarded-for': '192.0.2.5' } })).status, 404);
      });
    });

    it('serves the OpenAPI document generated from the schemas', async () => {
      const res = await h.request('GET', '/v1/openapi.json');
      assert.equal(res.status, 200);
      assert.equal(res.body.openapi, '3.1.0');
      for (const p of ['/v1/download', '/v1/jobs', '/v1/jobs/{job_id}', '/v1/info', '/v1/files/{token}', '/v1/webhooks', '/v1/webhooks/{id}', '/v1/webhooks/{id}/deliveries', '/v1/webhooks/{id}/test']) assert.ok(res.body.paths[p], p);
      assert.ok(res.body.components.schemas.Job);
      assert.deepEqual(res.body.components.schemas.DownloadRequest.properties.quality.enum, ['best', '1080p', '720p', '480p', 'audio']);
    });
  });
}
