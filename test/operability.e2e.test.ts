// What an operator sees of a real `bin/mediasvc serve` (embedded dev server, SQLite): search
// attributes in Temporal's visibility, Prometheus metrics that move with jobs, JSON log lines,
// liveness and readiness.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { projectRoot } from '../lib/config';
import { startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { cli, freePort, waitFor } from './helpers/processes';
import { startServeStack, type ServeStack } from './helpers/serve-stack';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const METRICS_TOKEN = 'operability-test-token-0123456789';

type Sample = { name: string; labels: Record<string, string>; value: number };

/** Parses a Prometheus text exposition with the reference parser (prometheus_client), failing on anything it rejects. */
async function parseMetrics(text: string): Promise<Sample[]> {
  const script = [
    'import json, sys',
    'from prometheus_client.parser import text_string_to_metric_families',
    'out = [{"name": s.name, "labels": s.labels, "value": s.value} for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples]',
    'print(json.dumps(out))',
  ].join('\n');
  const child = execFile(path.join(projectRoot, '.venv/bin/python'), ['-c', script], { maxBuffer: 64 * 1024 * 1024 });
  child.stdin!.end(text);
  const stdout = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`the Prometheus parser rejected /metrics: ${err}`))));
  });
  return JSON.parse(stdout) as Sample[];
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

describe('operability: search attributes, metrics, logs and health on a live serve', function () {
  this.timeout(300_000);
  let fx: FixturePlatform;
  let hooks: Receiver;
  let s: ServeStack;
  let temporal: Client;
  let metricsPort: number;
  let other: { accountId: string; key: string };
  const jobs: Record<'preview' | 'missing' | 'otherFingerprint', string> = { preview: '', missing: '', otherFingerprint: '' };

  before(async () => {
    fx = await startFixturePlatform();
    hooks = await startReceiver();
    metricsPort = await freePort();
    s = await startServeStack({ name: 'operability', plan: 'enterprise', env: { LOG_LEVEL: 'info', METRICS_TOKEN, METRICS_PORT: String(metricsPort) } });
    const accountId = (await cli(s.env, 'accounts', 'create', '--name', 'other', '--plan', 'pro')).pop()!;
    other = { accountId, key: (await cli(s.env, 'keys', 'create', '--account', accountId, '--name', 'other key')).pop()! };
    temporal = new Client({ connection: await Connection.connect({ address: `127.0.0.1:${s.env.TEMPORAL_DEV_PORT}` }) });

    assert.equal((await s.api('POST', '/v1/webhooks', { url: hooks.url('/ops'), events: ['job.completed'] })).status, 201);
    const preview = await fetch(`${s.base}/v1/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json', 'x-request-id': 'ops-test-request-1' },
      body: JSON.stringify({ url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail' }),
    });
    assert.equal(preview.status, 202);
    assert.equal(preview.headers.get('x-request-id'), 'ops-test-request-1');
    jobs.preview = ((await preview.json()) as { job_id: string }).job_id;
    jobs.missing = (await s.api('POST', '/v1/fingerprint', { url: fx.url('/media/missing.mp4') })).body.job_id;
    const res = await fetch(`${s.base}/v1/fingerprint`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: fx.url('/media/v480.mp4') }),
    });
    assert.equal(res.status, 202);
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/, 'a request id is made up when none is sent');
    jobs.otherFingerprint = ((await res.json()) as { job_id: string }).job_id;

    // a user's error on the synchronous read: a source that is not there
    const info = await fetch(`${s.base}/v1/info?url=${encodeURIComponent(fx.url('/media/missing-info.mp4'))}`, { headers: { authorization: `Bearer ${s.key}`, 'x-request-id': 'ops-info-missing' } });
    assert.ok(info.status >= 400 && info.status < 500, `GET /v1/info of a 404 source: ${info.status}`);
    assert.equal((await s.waitJob(jobs.preview)).status, 'completed');
    assert.equal((await s.waitJob(jobs.missing)).status, 'failed');
    const otherJob = await waitFor('the other account\'s job', async () => {
      const body = (await (await fetch(`${s.base}/v1/jobs/${jobs.otherFingerprint}`, { headers: { authorization: `Bearer ${other.key}` } })).json()) as { status: string };
      return body.status === 'completed' || body.status === 'failed' ? body : undefined;
    }, 120_000);
    assert.equal(otherJob.status, 'completed');
    await waitFor('the webhook delivery', async () => (hooks.received.some((r) => r.path === '/ops') ? true : undefined), 60_000);
  });

  after(async () => {
    await temporal?.connection.close();
    await s?.stop();
    await hooks?.close();
    await fx?.close();
  });

  /** Workflow ids matching a visibility query, once visibility has caught up with `expected`. */
  async function ids(query: string, expected: string[]): Promise<string[]> {
    let last: string[] = [];
    try {
      return await waitFor(`visibility for ${query}`, async () => {
        last = [];
        for await (const wf of temporal.workflow.list({ query })) last.push(wf.workflowId);
        last.sort();
        return JSON.stringify(last) === JSON.stringify([...expected].sort()) ? last : undefined;
      }, 30_000, 500);
    } catch {
      return last;
    }
  }

  it('job workflows carry JobId, AccountId, JobType and JobStatus, and a memo with source_url and the fairness key: queries return exactly the right workflows', async () => {
    const wf = (id: string) => `job-${id}`;
    assert.deepEqual(await ids(`JobType = 'fingerprint'`, [wf(jobs.missing), wf(jobs.otherFingerprint)]), [wf(jobs.missing), wf(jobs.otherFingerprint)].sort());
    assert.deepEqual(await ids(`AccountId = '${s.accountId}' AND JobStatus = 'failed'`, [wf(jobs.missing)]), [wf(jobs.missing)]);
    assert.deepEqual(await ids(`AccountId = '${other.accountId}'`, [wf(jobs.otherFingerprint)]), [wf(jobs.otherFingerprint)]);
    assert.deepEqual(await ids(`JobStatus = 'completed' AND JobType = 'preview'`, [wf(jobs.preview)]), [wf(jobs.preview)]);
    assert.deepEqual(await ids(`JobId = '${jobs.preview}' AND WorkflowType = 'mediaJobWorkflow'`, [wf(jobs.preview)]), [wf(jobs.preview)]);
    // the failed job's workflow also ends Failed, so ExecutionStatus queries agree
    assert.deepEqual(await ids(`ExecutionStatus = 'Failed' AND JobType = 'fingerprint'`, [wf(jobs.missing)]), [wf(jobs.missing)]);

    const desc = await temporal.workflow.getHandle(wf(jobs.missing)).describe();
    assert.equal(desc.memo?.source_url, fx.url('/media/missing.mp4'));
    // the fairness key its tasks are dispatched under, readable in the UI
    assert.deepEqual([desc.memo?.fairness_key, desc.memo?.fairness_weight, desc.memo?.plan], [s.accountId, 6, 'enterprise']);

    // the webhook delivery of the completed job carries the job's and account's ids
    const hooksOfJob = await ids(`WorkflowType = 'webhookDeliveryWorkflow' AND JobId = '${jobs.preview}'`, [`webhook-${jobs.preview}-job.completed-ep1`]);
    assert.equal(hooksOfJob.length, 1, `delivery workflows of the preview job: ${JSON.stringify(hooksOfJob)}`);
    assert.deepEqual(await ids(`WorkflowType = 'webhookDeliveryWorkflow' AND AccountId = '${s.accountId}'`, hooksOfJob), hooksOfJob);
  });

  it('/metrics parses with the Prometheus text parser, needs the token on the API port, and its counters moved with the jobs', async () => {
    assert.equal((await fetch(`${s.base}/metrics`)).status, 401);
    assert.equal((await fetch(`${s.base}/metrics`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status, 401);
    const res = await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const m = await parseMetrics(await res.text());

    assert.equal(value(m, 'mediasvc_jobs_created_total', { type: 'fingerprint' }), 2);
    assert.equal(value(m, 'mediasvc_jobs_created_total', { type: 'preview' }), 1);
    assert.equal(value(m, 'mediasvc_jobs_completed_total', { type: 'preview' }), 1);
    assert.equal(value(m, 'mediasvc_jobs_completed_total', { type: 'fingerprint' }), 1);
    assert.equal(value(m, 'mediasvc_jobs_failed_total', { type: 'fingerprint' }), 1);
    assert.equal(value(m, 'mediasvc_job_duration_seconds_count', { type: 'fingerprint' }), 2);
    const charged = value(m, 'mediasvc_credits_charged_total');
    assert.ok(charged >= 3, `credits charged ${charged}`);
    const missing = await s.api('GET', `/v1/jobs/${jobs.missing}`);
    assert.equal(value(m, 'mediasvc_credits_refunded_total', { for: 'fingerprint' }), missing.body.credits_charged);
    assert.ok(value(m, 'mediasvc_webhook_delivery_attempts_total', { event: 'job.completed', outcome: 'delivered' }) >= 1);
    assert.ok(value(m, 'mediasvc_webhook_delivery_seconds_count', { event: 'job.completed' }) >= 1);
    assert.equal(value(m, 'mediasvc_http_requests_total', { method: 'POST', route: '/v1/fingerprint', status: '202' }), 2);
    assert.ok(value(m, 'mediasvc_http_request_duration_seconds_count', { method: 'GET', route: '/v1/jobs/:job_id' }) >= 1);
    const backlog = m.filter((x) => x.name === 'mediasvc_queue_backlog');
    assert.deepEqual([...new Set(backlog.map((x) => x.labels.queue))].sort(), ['control', 'media-fetch', 'media-info', 'media-process', 'media-speech', 'webhooks']);

    // the same registry on METRICS_PORT, without a token; a new job moves the counter there too
    const before = value(await parseMetrics(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()), 'mediasvc_jobs_created_total', { type: 'preview' });
    const id = (await s.api('POST', '/v1/preview', { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail' })).body.job_id as string;
    await s.waitJob(id);
    const after = await parseMetrics(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
    assert.equal(value(after, 'mediasvc_jobs_created_total', { type: 'preview' }), before + 1);
    assert.equal(value(after, 'mediasvc_jobs_completed_total', { type: 'preview' }), 2);
  });

  it('housekeeping and the monthly top-up are Temporal Schedules, one of each however many processes', async () => {
    const ids: string[] = [];
    for await (const sch of temporal.schedule.list()) ids.push(sch.scheduleId);
    assert.deepEqual(ids.sort(), ['mediasvc-monthly-credits', 'mediasvc-reconcile-jobs', 'mediasvc-sweep-storage']);
    const topUp = await temporal.schedule.getHandle('mediasvc-monthly-credits').describe();
    assert.equal(topUp.action.type, 'startWorkflow');
    assert.equal(topUp.action.type === 'startWorkflow' && topUp.action.workflowType, 'grantMonthlyCreditsWorkflow');
    const next = topUp.info.nextActionTimes[0]!;
    assert.equal(next.getUTCDate(), 1, `next top-up ${next.toISOString()}`);
    assert.equal(next.getUTCHours() * 60 + next.getUTCMinutes(), 0);
  });

  it('the embedded Temporal server collects its Go heap at GOGC=50 (its memory between bursts), and serve\'s Node keeps one malloc arena', () => {
    const environ = (pid: number) => Object.fromEntries(fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    const servePid = s.svc.child.pid!;
    const children = fs.readFileSync(`/proc/${servePid}/task/${servePid}/children`, 'utf8').trim().split(/\s+/).map(Number);
    const temporal = children.filter((pid) => fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'temporal');
    assert.equal(temporal.length, 1, `serve's children: ${children.map((pid) => fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()).join(', ')}`);
    assert.equal(environ(temporal[0]!).GOGC, process.env.GOGC ?? '50');
    if (!process.env.MALLOC_ARENA_MAX) assert.equal(environ(servePid).MALLOC_ARENA_MAX, '1');
  });

  it('/healthz is liveness (never rate-limited), /readyz checks the database, Temporal, the bucket and the disk, and names the JS runtime yt-dlp reports', async () => {
    const health = await fetch(`${s.base}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(health.headers.get('x-ratelimit-limit'), null);
    type Ready = { yt_dlp: string; js_runtime: Record<string, unknown> | null };
    // yt-dlp's report is asked for once as the API starts: null until it is in
    const { status, body } = await waitFor('/readyz with yt-dlp\'s report', async () => {
      const res = await fetch(`${s.base}/readyz`);
      const b = (await res.json()) as Ready;
      return b.js_runtime ? { status: res.status, body: b } : undefined;
    }, 60_000, 500);
    assert.equal(status, 200);
    assert.match(body.yt_dlp, /^\d{4}\.\d{1,2}\.\d{1,2}/, 'the yt-dlp version in use');
    assert.deepEqual(body, { status: 'ok', database: 'ok', temporal: 'ok', storage: 'ok', disk: 'ok', yt_dlp: body.yt_dlp, js_runtime: body.js_runtime, platforms: [] });
    const js = body.js_runtime!;
    assert.deepEqual([js.runtime, js.supported, js.solves, js.runtimes, js.ejs], ['deno', true, true, 'deno-2.9.8', '0.8.0']);
    assert.match(String(js.challenge_providers), /(^|, )deno(, |$)/);
    assert.equal(js.po_token_providers, 'none');
    assert.ok(!Number.isNaN(Date.parse(String(js.checked_at))));
  });

  it('logs are JSON lines: access lines with request ids, a job\'s lifecycle with its job_id, and a 404 source (of a job and of GET /v1/info) without a stack trace or a warning', () => {
    const raw = fs.readFileSync(path.join(s.dataDir, 'serve.log'), 'utf8').split('\n').filter(Boolean);
    const lines = raw.map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        assert.fail(`a log line is not JSON: ${l.slice(0, 300)}`);
      }
    });
    assert.ok(lines.every((l) => typeof l.level === 'string' && typeof l.time === 'string' && typeof l.msg === 'string'));
    const access = lines.find((l) => l.msg === 'request' && l.req_id === 'ops-test-request-1');
    assert.ok(access, 'the access line of the request with X-Request-Id');
    assert.deepEqual({ method: access.method, route: access.route, status: access.status, account_id: access.account_id }, { method: 'POST', route: '/v1/preview', status: 202, account_id: s.accountId });
    assert.equal(access.key_prefix, s.key.slice(0, 8));
    assert.equal(typeof access.ms, 'number');

    const of = (id: string) => lines.filter((l) => l.job_id === id);
    assert.deepEqual(of(jobs.preview).filter((l) => l.component === undefined).map((l) => l.msg), ['job created', 'job processing', 'job completed', 'webhook attempt']);
    const attempt = of(jobs.preview).find((l) => l.msg === 'webhook attempt')!;
    assert.deepEqual({ event: attempt.event, outcome: attempt.outcome, http_status: attempt.http_status }, { event: 'job.completed', outcome: 'delivered', http_status: 200 });
    assert.ok(of(jobs.preview).every((l) => l.job_type === 'preview' || l.component !== undefined || l.msg === 'webhook attempt'));
    const failed = of(jobs.missing);
    assert.deepEqual(failed.filter((l) => l.component === undefined && l.msg !== 'webhook attempt').map((l) => l.msg), ['job created', 'job processing', 'job failed']);
    assert.match(String(failed.find((l) => l.msg === 'job failed')!.error_message), /^The source is not available/);
    // one "job failed" line per failed job, whichever component would have written it
    assert.equal(failed.filter((l) => l.msg === 'job failed').length, 1, JSON.stringify(failed.map((l) => [l.component, l.msg])));
    // a user's error: no stack anywhere, no warning or error about it
    const aboutIt = lines.filter((l) => JSON.stringify(l).includes(jobs.missing));
    assert.ok(aboutIt.length >= 3);
    for (const l of aboutIt) {
      assert.doesNotMatch(JSON.stringify(l), /"stack"|\\n\s+at /, `a stack in ${JSON.stringify(l).slice(0, 400)}`);
      assert.ok(l.level === 'info' || l.level === 'debug', `${l.level}: ${JSON.stringify(l).slice(0, 400)}`);
    }
    // the same for the synchronous read's user error, from its activity, workflow and route
    const aboutInfo = lines.filter((l) => l.req_id === 'ops-info-missing' || JSON.stringify(l).includes('missing-info.mp4'));
    assert.ok(aboutInfo.length >= 1);
    for (const l of aboutInfo) {
      assert.doesNotMatch(JSON.stringify(l), /"stack"|\\n\s+at /, `a stack in ${JSON.stringify(l).slice(0, 400)}`);
      assert.ok(l.level === 'info' || l.level === 'debug', `${l.level}: ${JSON.stringify(l).slice(0, 400)}`);
    }
    // Temporal's own logs come through in the same format
    assert.ok(lines.some((l) => l.component === 'temporal'));
  });
});
