import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from '../workers/temporal-dev-server';
import { startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { cli, freePort, startService, stopService, waitFor, waitHealthy, type Service } from './helpers/processes';
import { TEMPORAL_CLI } from './helpers/temporal';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhook durability: the worker delivering webhooks is killed between attempts (real dev server)', function () {
  let fx: FixturePlatform;
  let rx: Receiver;
  let temporal: DevServer;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let base: string;
  let key: string;
  let accountId: string;
  let api: Service;
  let media: Service;
  let control: Service;
  let hooks: Service;

  before(async () => {
    fx = await startFixturePlatform();
    rx = await startReceiver();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-durable-'));
    temporal = await startDevServer({ cliPath: TEMPORAL_CLI, dbFile: path.join(dataDir, 'temporal.sqlite'), port: await freePort(), uiPort: await freePort() });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // the contract's 1/5/30-minute schedule, compressed so the test waits seconds, not minutes
    env = { TEMPORAL_ADDRESS: temporal.address, DATA_DIR: dataDir, PORT: String(port), ALLOW_PRIVATE_NETWORK: '1', DATABASE_URL: '', WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,5,10,15' };
    await cli(env, 'migrate');
    api = startService(['api'], env, path.join(dataDir, 'api.log'));
    media = startService(['worker', '--queues', 'media-info,media-fetch,media-process,media-speech'], env, path.join(dataDir, 'media.log'));
    control = startService(['worker', '--queues', 'control'], env, path.join(dataDir, 'control.log'));
    hooks = startService(['worker', '--queues', 'webhooks'], env, path.join(dataDir, 'webhooks-1.log'));
    await waitHealthy(base, api);
    accountId = (await cli(env, 'accounts', 'create', '--name', 'durable', '--plan', 'pro')).pop()!;
    key = (await cli(env, 'keys', 'create', '--account', accountId, '--name', 'k')).pop()!;
  });

  after(async () => {
    await Promise.all([api, media, control, hooks].filter(Boolean).map((s) => stopService(s)));
    await temporal?.stop();
    await rx?.close();
    await fx?.close();
    if (process.env.KEEP_TEST_DATA) console.log(`kept ${dataDir}`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Waits until every webhook delivery workflow of the job has closed, and says they all succeeded. */
  const deliveriesClosed = async (jobId: string) => {
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const client = new Client({ connection });
      const statuses = await waitFor(`the webhook deliveries of ${jobId} closed`, async () => {
        const found: string[] = [];
        for await (const w of client.workflow.list({ query: `WorkflowType = 'webhookDeliveryWorkflow'` })) if (w.workflowId.startsWith(`webhook-${jobId}-`)) found.push(w.status.name);
        return found.length && found.every((st) => st !== 'RUNNING') ? found : undefined;
      }, 60_000, 200);
      assert.ok(statuses.every((st) => st === 'COMPLETED'), statuses.join(', '));
    } finally {
      await connection.close();
    }
  };

  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(base + p, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('delivers the next attempt exactly once after a new worker starts', async () => {
    rx.script('/durable', [500, 200]);
    const hook = await call('POST', '/v1/webhooks', { url: rx.url('/durable'), events: ['job.completed'] });
    assert.equal(hook.status, 201);
    const job = await call('POST', '/v1/download', { url: fx.url('/media/v480.mp4') });
    assert.equal(job.status, 202);
    const hits = () => rx.received.filter((r) => r.path === '/durable');
    await waitFor('attempt 1', async () => (hits().length >= 1 ? true : undefined), 60_000, 100);
    hooks.signal('SIGKILL');
    await hooks.exited;

    // attempt 2 is due 5 s after attempt 1; with no webhooks worker nothing may be sent in that window
    // (a window, not a condition: what is asserted is that nothing happens)
    await sleep(8_000);
    assert.equal(hits().length, 1, 'no attempt while no worker runs');

    hooks = startService(['worker', '--queues', 'webhooks'], env, path.join(dataDir, 'webhooks-2.log'));
    await waitFor('attempt 2', async () => (hits().length >= 2 ? true : undefined), 60_000, 100);
    // a success ends the retries: once the delivery has closed, nothing more can be sent
    await deliveriesClosed(job.body.job_id);
    assert.equal(hits().length, 2, 'the next attempt happened exactly once');
    const [a1, a2] = hits();
    assert.equal(a1!.body, a2!.body, 'the same bytes on every attempt');
    assert.equal(a1!.headers['webhook-id'], a2!.headers['webhook-id']);
    const secret = hook.body.secret as string;
    for (const r of [a1!, a2!]) {
      const hex = crypto.createHmac('sha256', secret).update(r.body).digest('hex');
      assert.equal(r.headers['x-service-signature'], hex);
    }
    const log = await call('GET', `/v1/webhooks/${hook.body.id}/deliveries`);
    const rows = log.body.items.map((d: { attempt: number; status: string; status_code: number | null }) => [d.attempt, d.status, d.status_code]);
    assert.deepEqual(rows[0], [2, 'succeeded', 200]);
    // the worker was killed as attempt 1 reached the target: logged with its 500, or as lost if the
    // worker died before it could log it
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[1].slice(0, 2), [1, 'failed']);
    assert.ok(rows[1][2] === 500 || rows[1][2] === null, String(rows[1][2]));
    assert.equal(JSON.parse(a2!.body).data.job_id, job.body.job_id);

    // with no crash, a job's own webhook_url gets its job.completed exactly once (a delivery in
    // flight when a worker dies may legitimately arrive twice, so this runs after the restart)
    const second = await call('POST', '/v1/download', { url: fx.url('/media/v480.mp4'), webhook_url: rx.url('/per-job') });
    assert.equal(second.status, 202);
    await waitFor('per-job event', async () => (rx.received.some((r) => r.path === '/per-job') ? true : undefined), 60_000, 100);
    await deliveriesClosed(second.body.job_id); // a success sends nothing more
    const perJob = rx.received.filter((r) => r.path === '/per-job');
    assert.equal(perJob.length, 1);
    assert.equal(JSON.parse(perJob[0]!.body).data.job_id, second.body.job_id);

    // per-job webhook_url works on other operations too: a preview and a failing transcription
    const preview = await call('POST', '/v1/preview', { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail', webhook_url: rx.url('/per-job-preview') });
    assert.equal(preview.status, 202, JSON.stringify(preview.body));
    const failing = await call('POST', '/v1/transcribe', { url: fx.url('/missing'), model_size: 'base', webhook_url: rx.url('/per-job-transcribe') });
    assert.equal(failing.status, 202, JSON.stringify(failing.body));
    const one = (p: string) => rx.received.filter((r) => r.path === p);
    await waitFor('preview event', async () => (one('/per-job-preview').length ? true : undefined), 60_000, 100);
    await waitFor('transcribe event', async () => (one('/per-job-transcribe').length ? true : undefined), 60_000, 100);
    const pe = JSON.parse(one('/per-job-preview')[0]!.body);
    assert.deepEqual([pe.event, pe.data.job_type, pe.data.job_id, pe.data.result_data.preview_type], ['job.completed', 'preview', preview.body.job_id, 'thumbnail']);
    const te = JSON.parse(one('/per-job-transcribe')[0]!.body);
    assert.deepEqual([te.event, te.data.job_type, te.data.status], ['job.failed', 'transcribe', 'failed']);
  });

  it("a slow endpoint's attempt holds the worker's slot for a second, not for its answer: with one slot, deliveries go past two slow ones, and a stopping worker reports the answers first (and finishes an attempt still on its slot)", async () => {
    const SLOW_MS = 9000;
    await stopService(hooks);
    hooks = startService(['worker', '--queues', 'webhooks'], { ...env, QUEUE_CONCURRENCY: 'webhooks=1' }, path.join(dataDir, 'webhooks-one-slot.log'));
    const endpoints = new Map<string, { id: number; secret: string }>();
    for (const name of ['slow-1', 'slow-2', 'fast', 'silent']) {
      const hook = await call('POST', '/v1/webhooks', { url: rx.url(`/${name}`), events: ['job.failed'] });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      endpoints.set(name, hook.body);
      if (name.startsWith('slow')) rx.delay(`/${name}`, SLOW_MS);
      // past the 10 s window: the attempt fails off its slot, and its retry is scheduled
      if (name === 'silent') rx.delay(`/${name}`, 15_000);
    }
    // the delivery workflows as a job's completion starts them, straight onto the webhooks queue
    const connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection });
    const deliver = (name: string) => {
      const jobId = crypto.randomUUID();
      return client.workflow.start('webhookDeliveryWorkflow', {
        taskQueue: 'webhooks',
        workflowId: `slow-answers-${name}-${jobId}`,
        args: [{ deliveryId: `msg_${jobId}`, accountId, webhookId: endpoints.get(name)!.id, url: rx.url(`/${name}`), event: 'job.failed', jobId, body: JSON.stringify({ event: 'job.failed', data: { job_id: jobId } }), scheduleMs: [0, 60_000] }],
      });
    };
    const hit = (name: string) => rx.received.filter((r) => r.path === `/${name}`);
    try {
      const slow = [await deliver('slow-1'), await deliver('slow-2')];
      await waitFor('both slow attempts at their endpoints', async () => (hit('slow-1').length && hit('slow-2').length ? true : undefined), 60_000, 50);
      const fast = await deliver('fast');
      await waitFor('the fast delivery', async () => (hit('fast').length ? true : undefined), 60_000, 50);
      const first = Math.min(hit('slow-1')[0]!.at, hit('slow-2')[0]!.at);
      const answered = first + SLOW_MS;
      const [second, third] = [Math.max(hit('slow-1')[0]!.at, hit('slow-2')[0]!.at), hit('fast')[0]!.at];
      console.log(`      one slot: the second slow attempt arrived ${((second - first) / 1000).toFixed(1)} s after the first, the fast one ${((third - first) / 1000).toFixed(1)} s after it; the first slow answer came ${SLOW_MS / 1000} s after it`);
      assert.ok(second < answered, `the second slow attempt waited for the first one's answer (${second - first} ms after it)`);
      assert.ok(third < answered, `the fast delivery waited for a slow answer (${third - first} ms after the first slow attempt)`);
      assert.equal(await fast.result(), 'succeeded');
      const silent = await deliver('silent');
      await waitFor('the attempt to the silent endpoint', async () => (hit('silent').length ? true : undefined), 60_000, 50);

      // a worker told to stop while it awaits the slow answers reports them before it exits; the silent
      // endpoint's attempt, still on its slot, finishes there (the stop waits for it) and is logged as failed
      hooks.signal('SIGTERM');
      await hooks.exited;
      const exitedAt = Date.now();
      assert.ok(exitedAt > answered, `the worker exited ${answered - exitedAt} ms before the first slow answer`);
      hooks = startService(['worker', '--queues', 'webhooks'], env, path.join(dataDir, 'webhooks-after-slow.log'));
      for (const handle of slow) assert.equal(await handle.result(), 'succeeded', handle.workflowId);
      for (const name of ['slow-1', 'slow-2', 'fast']) {
        assert.equal(hit(name).length, 1, `${name}: one request, no attempt lost or repeated`);
        const log = await call('GET', `/v1/webhooks/${endpoints.get(name)!.id}/deliveries`);
        const rows = log.body.items.map((d: { attempt: number; status: string; status_code: number | null; response_time_ms: number | null }) => [d.attempt, d.status, d.status_code, (d.response_time_ms ?? 0) >= SLOW_MS]);
        assert.deepEqual(rows, [[1, 'succeeded', 200, name !== 'fast']], name);
        const r = hit(name)[0]!;
        assert.equal(r.headers['x-service-signature'], crypto.createHmac('sha256', endpoints.get(name)!.secret).update(r.body).digest('hex'), `${name}: signed with its endpoint's secret`);
      }
      const silentLog = (await call('GET', `/v1/webhooks/${endpoints.get('silent')!.id}/deliveries`)).body.items as { attempt: number; status: string; status_code: number | null; error: string; next_attempt_at: string | null }[];
      assert.deepEqual(silentLog.map((d) => [d.attempt, d.status, d.status_code, d.error, d.next_attempt_at !== null]), [[1, 'failed', null, 'no answer within 10 s', true]]);
      assert.equal((await silent.describe()).status.name, 'RUNNING', 'the silent endpoint\'s delivery waits for its next attempt');
      await silent.terminate('the test is over');
      assert.doesNotMatch(fs.readFileSync(path.join(dataDir, 'webhooks-one-slot.log'), 'utf8'), /could not be reported/);
    } finally {
      await connection.close();
    }
  });

  it('a worker started before Temporal answers waits for it, then runs (it does not exit)', async () => {
    const port = await freePort();
    const logFile = path.join(dataDir, 'early-worker.log');
    const early = startService(['worker', '--queues', 'media-info'], { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${port}` }, logFile);
    let late: DevServer | undefined;
    try {
      await waitFor('the worker trying again', async () => (fs.readFileSync(logFile, 'utf8').includes('Temporal did not answer') ? true : undefined), 60_000, 200);
      late = await startDevServer({ cliPath: TEMPORAL_CLI, dbFile: path.join(dataDir, 'late-temporal.sqlite'), port, uiPort: await freePort() });
      await waitFor('the worker running', async () => (/"state":"RUNNING"/.test(fs.readFileSync(logFile, 'utf8')) ? true : undefined), 60_000, 200);
      const exited = await Promise.race([early.exited, sleep(1000).then(() => 'running')]);
      assert.equal(exited, 'running', fs.readFileSync(logFile, 'utf8').split('\n').slice(-5).join('\n'));
    } finally {
      await stopService(early);
      await late?.stop();
    }
  });
});
