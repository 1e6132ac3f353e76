import { createPlatformActivities } from '../platforms/breaker.activities';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type http from 'node:http';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createJobLifecycleActivities } from '../jobs/lifecycle.activities';
import { createWebhookActivities, type AttemptResult, type WebhookActivities } from '../webhooks/activities';
import { chargeCredits } from '../credits/repository';
import { Account } from '../accounts/entity';
import { Job } from '../jobs/entity';
import { WebhookDelivery, WebhookEndpoint } from '../webhooks/entity';
import { recordDelivered } from '../webhooks/repository';
import { ApplicationFailure } from '@temporalio/common';
import { USER_FAILURE_TYPES } from '../lib/job-failure';
import { type MediaJobInput } from '../jobs/types';
import type { WebhookDeliveryInput } from '../webhooks/delivery.workflow';
import { workflowBundle } from '../workers/workflow-bundle';
import { startApiHarness, type ApiHarness } from './helpers/api-harness';
import { DRIVEN_WORKFLOW_OPTIONS, driveToCompletion, timeSkippingEnv } from './helpers/temporal';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

/** Verifies both signatures from their definitions in docs/api.md, written here independently of the service. */
function verifySignatures(secret: string, headers: http.IncomingHttpHeaders, body: string): boolean {
  const hex = crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(body, 'utf8')).digest('hex');
  const given = Buffer.from(String(headers['x-service-signature'] ?? ''));
  const serviceOk = given.length === hex.length && crypto.timingSafeEqual(given, Buffer.from(hex));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${String(headers['webhook-id'])}.${String(headers['webhook-timestamp'])}.${body}`;
  const expected = `v1,${crypto.createHmac('sha256', key).update(signed).digest('base64')}`;
  const standardOk = String(headers['webhook-signature'] ?? '').split(' ').includes(expected);
  return serviceOk && standardOk;
}

describe('webhooks', function () {
  let h: ApiHarness;
  let rx: Receiver;
  before(async () => {
    h = await startApiHarness('sqlite');
    rx = await startReceiver();
  });
  after(async () => {
    await rx?.close();
    await h?.close();
  });

  describe('endpoint management API', () => {
    it('creates an endpoint and returns its secret only once', async () => {
      const a = await h.newAccount();
      const created = await h.request('POST', '/v1/webhooks', { key: a.key, body: { url: rx.url('/a'), events: ['job.completed'] } });
      assert.equal(created.status, 201);
      assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(created.body.secret.slice(6), 'base64').length, 32);
      assert.deepEqual(created.body.events, ['job.completed']);
      assert.equal(created.body.is_active, true);
      const id = created.body.id;
      const fetched = await h.request('GET', `/v1/webhooks/${id}`, { key: a.key });
      assert.equal(fetched.status, 200);
      assert.equal(fetched.body.secret, undefined);
      const list = await h.request('GET', '/v1/webhooks', { key: a.key });
      assert.deepEqual(list.body.items.map((e: { id: number }) => e.id), [id]);
      assert.ok(list.body.items.every((e: object) => !('secret' in e)));

      const patched = await h.request('PATCH', `/v1/webhooks/${id}`, { key: a.key, body: { is_active: false, events: [] } });
      assert.equal(patched.status, 200);
      assert.deepEqual([patched.body.is_active, patched.body.events, patched.body.secret], [false, [], undefined]);
      assert.equal((await h.request('PATCH', `/v1/webhooks/${id}`, { key: a.key, body: {} })).status, 422);

      const other = await h.newAccount();
      assert.equal((await h.request('GET', `/v1/webhooks/${id}`, { key: other.key })).status, 404);
      assert.equal((await h.request('DELETE', `/v1/webhooks/${id}`, { key: other.key })).status, 404);
      const del = await h.request('DELETE', `/v1/webhooks/${id}`, { key: a.key });
      assert.equal(del.status, 204);
      assert.equal((await h.request('GET', `/v1/webhooks/${id}`, { key: a.key })).status, 404);
    });

    it('validates url and events, and allows at most 10 endpoints', async () => {
      const a = await h.newAccount();
      for (const body of [{}, { url: 'ftp://x/y' }, { url: rx.url(), events: ['job.started'] }, { url: rx.url(), events: 'job.completed' }]) {
        const res = await h.request('POST', '/v1/webhooks', { key: a.key, body });
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.equal(typeof res.body.detail, 'string');
      }
      for (let i = 0; i < 10; i++) assert.equal((await h.request('POST', '/v1/webhooks', { key: a.key, body: { url: rx.url(`/n${i}`) } })).status, 201);
      const eleventh = await h.request('POST', '/v1/webhooks', { key: a.key, body: { url: rx.url('/n10') } });
      assert.equal(eleventh.status, 422);
      assert.match(eleventh.body.detail, /at most 10/);
    });

    it('test call sends a signed synthetic job.completed, logs it, and answers with the record', async () => {
      const a = await h.newAccount();
      const created = await h.request('POST', '/v1/webhooks', { key: a.key, body: { url: rx.url('/test-call') } });
      const before = rx.received.length;
      const res = await h.request('POST', `/v1/webhooks/${created.body.id}/test`, { key: a.key });
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'succeeded');
      assert.equal(res.body.status_code, 200);
      assert.equal(res.body.attempt, 1);
      assert.equal(res.body.next_attempt_at, null);
      assert.equal(typeof res.body.response_time_ms, 'number');
      const got = rx.received.slice(before);
      assert.equal(got.length, 1);
      const req = got[0]!;
      assert.ok(verifySignatures(created.body.secret, req.headers, req.body), 'signatures verify independently');
      assert.ok(!verifySignatures(created.body.secret, req.headers, req.body.replace('job.completed', 'job.failed')), 'a tampered body fails');
      assert.ok(!verifySignatures(newSecret(), req.headers, req.body), 'another secret fails');
      assert.equal(req.headers['content-type'], 'application/json');
      assert.match(String(req.headers['user-agent']), /mediasvc/);
      assert.ok(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000) < 30);
      const body = JSON.parse(req.body);
      assert.equal(body.event, 'job.completed');
      assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(Object.keys(body.data).sort(), ['completed_at', 'created_at', 'credits_charged', 'download_url', 'files', 'job_id', 'job_type', 'result_data', 'source_url', 'status']);
      const log = await h.request('GET', `/v1/webhooks/${created.body.id}/deliveries`, { key: a.key });
      assert.deepEqual(log.body.items.map((d: { id: string }) => d.id), [res.body.id]);
      assert.equal(log.body.has_more, false);
    });

    it('refuses private targets: 422 for a literal address, a failed delivery when DNS gives one', async () => {
      const a = await h.newAccount();
      h.config.allowPrivateNetwork = false;
      try {
        for (const url of ['http://127.0.0.1:9/h', 'http://10.0.0.8/h', 'http://[::1]/h', 'http://169.254.169.254/h']) {
          const res = await h.request('POST', '/v1/webhooks', { key: a.key, body: { url } });
          assert.equal(res.status, 422, url);
          assert.match(res.body.detail, /private or reserved/);
        }
        const created = await h.request('POST', '/v1/webhooks', { key: a.key, body: { url: rx.url('/dns').replace('127.0.0.1', 'localhost') } });
        assert.equal(created.status, 201);
        const before = rx.received.length;
        const res = await h.request('POST', `/v1/webhooks/${created.body.id}/test`, { key: a.key });
        assert.equal(res.body.status, 'failed');
        assert.equal(res.body.status_code, null);
        assert.match(res.body.error, /resolves to .*private or reserved/);
        assert.equal(rx.received.length, before, 'nothing was sent');
      } finally {
        h.config.allowPrivateNetwork = true;
      }
    });

    it('treats a redirect as a failure and does not follow it', async () => {
      const a = await h.newAccount();
      rx.script('/redirect', [302]);
      const created = await h.request('POST', '/v1/webhooks', { key: a.key, body: { url: rx.url('/redirect') } });
      const res = await h.request('POST', `/v1/webhooks/${created.body.id}/test`, { key: a.key });
      assert.equal(res.body.status, 'failed');
      assert.equal(res.body.status_code, 302);
    });

    it('pages the delivery log with a cursor', async () => {
      const a = await h.newAccount();
      const created = await h.request('POST', '/v1/webhooks', { key: a.key, body: { url: rx.url('/paged') } });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.unshift((await h.request('POST', `/v1/webhooks/${created.body.id}/test`, { key: a.key })).body.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { items: { id: string }[]; next_cursor: string | null } } = await h.request('GET', `/v1/webhooks/${created.body.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: a.key });
        seen.push(...res.body.items.map((d) => d.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, ids);
    });
  });

  describe('delivery workflow (time-skipping, real activities and HTTP)', () => {
    let env: TestWorkflowEnvironment;
    let workers: Worker[];
    let running: Promise<unknown>;
    let accountId: string;
    type AttemptInput = Parameters<WebhookActivities['attemptDelivery']>[0];
    let aroundAttempt: ((input: AttemptInput, real: WebhookActivities['attemptDelivery']) => Promise<AttemptResult>) | null = null;

    before(async () => {
      env = await timeSkippingEnv();
      const realActs = createWebhookActivities({ orm: h.orm, config: h.config, now: () => env.currentTimeMs() });
      // a test may stand between the workflow and an attempt (to lose its answer after it was sent)
      const webhookActs = { ...realActs, attemptDelivery: (i: AttemptInput) => (aroundAttempt ? aroundAttempt(i, realActs.attemptDelivery) : realActs.attemptDelivery(i)) };
      const controlActs = { ...createJobLifecycleActivities({ orm: h.orm, storage: h.storage, config: h.config }), ...createPlatformActivities({ orm: h.orm, config: h.config }) };
      // job operations are mocked at the workflow boundary; everything about events is real
      const fetchMock = {
        probeSource: async (url: string) => {
          if (url.includes('fail')) throw ApplicationFailure.nonRetryable('The source is not available: HTTP Error 404', USER_FAILURE_TYPES.unavailable);
          return { title: 'T', duration: 1 };
        },
        downloadSource: async () => 'download/x.mp4',
        // the source step of jobs started since source-once-v1
        resolveSource: async (i: { url: string }) => ({ ...(await fetchMock.probeSource(i.url)), sourceFile: 'download/x.mp4', media: null }),
      };
      const processMock = { finalizeDownload: async (i: { jobId: string }) => ({ outputFile: `${i.jobId}/output.mp4`, resultData: { title: 'T', duration: 1, format: 'mp4', filesize: 1 } }) };
      workers = await Promise.all([
        Worker.create({ connection: env.nativeConnection, taskQueue: 'control', workflowBundle: await workflowBundle(), activities: { ...controlActs, ...webhookActs } }),
        Worker.create({ connection: env.nativeConnection, taskQueue: 'webhooks', workflowBundle: await workflowBundle(), activities: webhookActs }),
        Worker.create({ connection: env.nativeConnection, taskQueue: 'media-fetch', activities: fetchMock }),
        Worker.create({ connection: env.nativeConnection, taskQueue: 'media-process', activities: processMock }),
      ]);
      running = Promise.all(workers.map((w) => w.run()));
      accountId = (await h.newAccount('business')).accountId;
    });
    after(async () => {
      for (const w of workers ?? []) w.shutdown();
      await running;
      await env?.teardown();
    });

    async function endpoint(path: string, events: string[] = []): Promise<WebhookEndpoint> {
      const em = h.orm.em.fork();
      const e = em.create(WebhookEndpoint, { accountId, url: rx.url(path), secret: newSecret(), events: events as WebhookEndpoint['events'], isActive: true, createdAt: new Date() });
      await em.flush();
      return e;
    }

    async function deliver(target: WebhookEndpoint, opts: { onAttempt?: (n: number) => Promise<void> } = {}) {
      const jobId = crypto.randomUUID();
      const input: WebhookDeliveryInput = {
        deliveryId: `whd_${jobId}_job.completed_ep${target.id}`,
        accountId,
        webhookId: target.id,
        url: target.url,
        event: 'job.completed',
        jobId,
        body: JSON.stringify({ event: 'job.completed', timestamp: new Date().toISOString(), data: { job_id: jobId } }),
        scheduleMs: h.config.webhookRetryScheduleMs,
      };
      const handle = await env.client.workflow.start('webhookDeliveryWorkflow', { taskQueue: 'control', workflowId: `webhook-${jobId}`, args: [input], ...DRIVEN_WORKFLOW_OPTIONS });
      let seen = 0;
      const result = opts.onAttempt
        ? await (async () => {
            for (;;) {
              const n = await h.orm.em.fork().count(WebhookDelivery, { deliveryId: input.deliveryId });
              if (n > seen) {
                seen = n;
                await opts.onAttempt!(n);
              }
              if ((await handle.describe()).status.name !== 'RUNNING') return handle.result();
              await new Promise((r) => setTimeout(r, 50));
              const d = await handle.describe();
              if ((d.raw.pendingActivities?.length ?? 0) === 0 && d.status.name === 'RUNNING') await env.sleep(30_000);
            }
          })()
        : await driveToCompletion(env, handle, { stepMs: 30_000, realMs: 50, holdWhileActivities: true });
      const records = await h.orm.em.fork().find(WebhookDelivery, { deliveryId: input.deliveryId }, { orderBy: { attempt: 'asc' } });
      return { result, records, input };
    }

    it('retries a failing target at +1, +5 and +30 minutes of virtual time: exactly 4 attempts, all logged', async () => {
      rx.script('/always-500', [500]);
      const e = await endpoint('/always-500');
      const before = rx.received.filter((r) => r.path === '/always-500').length;
      const started = Date.now();
      const { result, records } = await deliver(e);
      assert.equal(result, 'failed');
      assert.equal(rx.received.filter((r) => r.path === '/always-500').length - before, 4);
      assert.deepEqual(records.map((r) => [r.attempt, r.status, r.statusCode]), [[1, 'failed', 500], [2, 'failed', 500], [3, 'failed', 500], [4, 'failed', 500]]);
      const t0 = records[0]!.createdAt.getTime();
      const offsets = records.map((r) => (r.createdAt.getTime() - t0) / 60_000);
      for (const [i, want] of [0, 1, 5, 30].entries()) assert.ok(Math.abs(offsets[i]! - want) * 60 < 1, `attempt ${i + 1} at +${offsets[i]} min, want +${want}`);
      assert.deepEqual(
        records.map((r) => (r.nextAttemptAt ? (r.nextAttemptAt.getTime() - t0) / 60_000 : null)),
        [1, 5, 30, null],
      );
      assert.ok(records.every((r) => r.error === 'the endpoint answered HTTP 500' && typeof r.responseTimeMs === 'number'));
      // every attempt sends the same bytes with the same webhook-id
      const sent = rx.received.filter((r) => r.path === '/always-500').slice(before);
      assert.equal(new Set(sent.map((r) => r.body)).size, 1);
      assert.equal(new Set(sent.map((r) => r.headers['webhook-id'])).size, 1);
      assert.ok(sent.every((r) => verifySignatures(e.secret, r.headers, r.body)));
      assert.ok(Date.now() - started < 60_000, 'the 30-minute schedule runs in seconds');
    });

    it('stops after the third attempt when the target recovers', async () => {
      rx.script('/recovers', [500, 503, 200]);
      const { result, records } = await deliver(await endpoint('/recovers'));
      assert.equal(result, 'succeeded');
      assert.deepEqual(records.map((r) => [r.attempt, r.status, r.statusCode]), [[1, 'failed', 500], [2, 'failed', 503], [3, 'succeeded', 200]]);
      assert.equal(records[2]!.nextAttemptAt, null);
    });

    it('an attempt the target received whose answer never reached the workflow is not sent again: logged at once, or written late', async () => {
      // the answer lost after the attempt was logged (Temporal away when the worker reported it)
      rx.script('/answer-lost', [200]);
      const sent = (p: string) => rx.received.filter((r) => r.path === p).length;
      aroundAttempt = async (input, real) => {
        await real(input);
        throw new Error('the answer to Temporal was lost');
      };
      try {
        const { result, records } = await deliver(await endpoint('/answer-lost'));
        assert.equal(result, 'succeeded');
        assert.equal(sent('/answer-lost'), 1);
        assert.deepEqual(records.map((r) => [r.attempt, r.status, r.statusCode]), [[1, 'succeeded', 200]]);

        // the database was away too: attempt 1 is logged as lost, and its success is written (over it)
        // before attempt 2 is due, which then sends nothing
        rx.script('/written-late', [200]);
        let first: { input: AttemptInput; row: WebhookDelivery } | null = null;
        aroundAttempt = async (input, real) => {
          if (input.attempt === 1) {
            await real(input);
            const em = h.orm.em.fork();
            const row = await em.findOneOrFail(WebhookDelivery, { deliveryId: input.deliveryId, attempt: 1 });
            first = { input, row: { ...row } };
            await em.nativeDelete(WebhookDelivery, { id: row.id });
            throw new Error('the answer to Temporal was lost');
          }
          const { input: i1, row } = first!;
          const { body: _b, firstAttemptAtMs: _f, nextOffsetMs: _n, ...target } = i1;
          await recordDelivered(h.orm.em.fork(), target, { status: row.status, statusCode: row.statusCode, responseTimeMs: row.responseTimeMs, error: row.error, createdAt: row.createdAt, nextAttemptAt: row.nextAttemptAt });
          return real(input);
        };
        const late = await deliver(await endpoint('/written-late'));
        assert.equal(late.result, 'succeeded');
        assert.equal(sent('/written-late'), 1, 'the target got the event once');
        assert.deepEqual(late.records.map((r) => [r.attempt, r.status, r.statusCode]), [[1, 'succeeded', 200]], 'the late success replaced the lost attempt');
      } finally {
        aroundAttempt = null;
      }
    });

    it('stops at once on 410 Gone', async () => {
      rx.script('/gone', [410]);
      const { result, records } = await deliver(await endpoint('/gone'));
      assert.equal(result, 'gone');
      assert.equal(records.length, 1);
      assert.equal(records[0]!.nextAttemptAt, null);
    });

    it('stops before the next attempt when the endpoint is deactivated', async () => {
      rx.script('/deactivated', [500]);
      const e = await endpoint('/deactivated');
      const { result, records } = await deliver(e, {
        onAttempt: async (n) => {
          if (n === 1) await h.orm.em.fork().nativeUpdate(WebhookEndpoint, { id: e.id }, { isActive: false });
        },
      });
      assert.equal(result, 'cancelled');
      assert.equal(records.length, 1);
      assert.equal(records[0]!.nextAttemptAt, null, 'no attempt is announced any more');
    });

    it('a finished job starts one delivery per subscribed active target, signed, and a retried parent adds none', async () => {
      const acct = await h.newAccount('business');
      const em = h.orm.em.fork();
      const account = await em.findOneOrFail(Account, acct.accountId);
      const mk = (path: string, events: string[], isActive = true) =>
        em.create(WebhookEndpoint, { accountId: acct.accountId, url: rx.url(path), secret: newSecret(), events: events as WebhookEndpoint['events'], isActive, createdAt: new Date() });
      const all = mk('/f-all', []);
      mk('/f-failed-only', ['job.failed']);
      mk('/f-inactive', [], false);
      await em.flush();
      async function runJob(url: string, hook: string, runs: string[]): Promise<string> {
        const jobId = crypto.randomUUID();
        await chargeCredits(h.orm.em.fork(), acct.accountId, 1, 'download', async (tx) => {
          tx.create(Job, { id: jobId, accountId: acct.accountId, jobType: 'download', status: 'pending', sourceUrl: url, parameters: {}, creditsCharged: 1, resultData: null, webhookUrl: rx.url(hook), createdAt: new Date() });
          return { jobId, value: null };
        });
        const input: MediaJobInput = { jobId, jobType: 'download', sourceUrl: url, params: { url, quality: 'best', format: null, clip_start: null, clip_end: null, processing: null, subtitles: null, webhook_url: rx.url(hook) } };
        for (const runId of runs) {
          const handle = await env.client.workflow.start('mediaJobWorkflow', { taskQueue: 'control', workflowId: `job-${jobId}-${runId}`, args: [input], ...DRIVEN_WORKFLOW_OPTIONS });
          // a failed job's workflow ends Failed, after its events have been handed to their children
          await driveToCompletion(env, handle).catch((err: unknown) => {
            if (!(err instanceof WorkflowFailedError)) throw err;
          });
        }
        return jobId;
      }
      const before = rx.received.length;
      const jobId = await runJob('http://x/v.mp4', '/f-job', ['first', 'retried']);
      // the children run on their own; wait for them to be delivered
      for (let i = 0; i < 100 && rx.received.length - before < 2; i++) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 500));
      const got = rx.received.slice(before);
      assert.deepEqual(got.map((r) => r.path).sort(), ['/f-all', '/f-job']);
      const toAll = got.find((r) => r.path === '/f-all')!;
      const toJob = got.find((r) => r.path === '/f-job')!;
      assert.ok(verifySignatures(all.secret, toAll.headers, toAll.body), 'endpoint deliveries use the endpoint secret');
      assert.ok(verifySignatures(account.webhookSecret, toJob.headers, toJob.body), 'webhook_url deliveries use the account secret');
      assert.equal(toAll.body, toJob.body, 'one body per event');
      const body = JSON.parse(toAll.body);
      assert.equal(body.event, 'job.completed');
      assert.equal(body.data.job_id, jobId);
      assert.equal(body.data.status, 'completed');
      assert.match(body.data.download_url, /\/v1\/files\//);
      assert.deepEqual(body.data.result_data, { title: 'T', duration: 1, format: 'mp4', filesize: 1 });

      // a failed job: job.failed goes to the all-events and failed-only endpoints and its own URL
      const mark = rx.received.length;
      const failedId = await runJob('http://x/fail.mp4', '/f-job-2', ['first']);
      for (let i = 0; i < 100 && rx.received.length - mark < 3; i++) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 300));
      const failed = rx.received.slice(mark);
      assert.deepEqual(failed.map((r) => r.path).sort(), ['/f-all', '/f-failed-only', '/f-job-2']);
      const fb = JSON.parse(failed[0]!.body);
      assert.deepEqual([fb.event, fb.data.job_id, fb.data.status, fb.data.download_url, fb.data.result_data], ['job.failed', failedId, 'failed', null, null]);
      // beyond the contract: the failure's reason travels with the event
      assert.equal(fb.data.error_message, 'The source is not available: HTTP Error 404');
      assert.equal(body.data.error_message, undefined, 'job.completed carries no error_message');
    });
  });
});

function newSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}
