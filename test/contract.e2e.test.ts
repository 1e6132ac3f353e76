// The contract from the outside: a fuzzing client nobody here wrote (Schemathesis) against the live
// service, a linter on the OpenAPI document, and the findings only a running stack can show.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PLANS } from '../db/account.entity';
import { projectRoot } from '../lib/config';
import { FIXTURE, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { cli } from './helpers/processes';
import { startServeStack, type ServeStack } from './helpers/serve-stack';

const run = promisify(execFile);
const VENV = path.join(projectRoot, '.venv/bin');
/** Schemathesis's time budget (seconds); its phases repeat until it is spent. */
const FUZZ_SECONDS = Number(process.env.CONTRACT_FUZZ_SECONDS ?? 150);
const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance', 'negative_data_rejection', 'positive_data_acceptance'];

/**
 * Rules a JSON Schema cannot say, each documented with its 422 in the operation's description:
 * clip_end after clip_start, languages and models this server has installed, the 10-endpoint
 * quota, cursors only the server can sign, host names within DNS limits (253 characters, labels of 63). Schema-valid requests may meet them; nothing else may 422.
 */
const DOCUMENTED_422 = ['getVideoInfo', 'createFingerprintJob', 'createCommentsJob', 'createDownloadJob', 'createPreviewJob', 'createTranscribeJob', 'createTranslateJob', 'createWebhook', 'listJobs', 'listWebhookDeliveries'];

const toml = (v: unknown): string => JSON.stringify(v);

describe('the contract from the outside: Schemathesis against serve, the OpenAPI lint, findings on a live stack', function () {
  let fx: FixturePlatform;
  let s: ServeStack;
  let dir: string;
  let doc: any;

  before(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-contract-'));
    fx = await startFixturePlatform({
      extraRoutes: (_req, res, p) => {
        if (p !== '/docs/readme.txt') return false;
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Just some plain text, no video or audio.\n');
        return true;
      },
    });
    s = await startServeStack({ name: 'contract', plan: 'enterprise' });
    doc = await (await fetch(`${s.base}/v1/openapi.json`)).json();
  });

  after(async () => {
    await s?.stop();
    await fx?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the OpenAPI document passes openapi-spec-validator (3.1)', async () => {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc));
    const { stdout } = await run(path.join(VENV, 'openapi-spec-validator'), [file]);
    assert.match(stdout, /OK/);
  });

  it('3. GET /v1/info: a plain text file is a 404 and not charged; a page naming its video twice has the page title and the measured duration', async () => {
    // an account of its own: the fuzzing run's jobs may still be refunding on the shared one
    const account = (await cli(s.env, 'accounts', 'create', '--name', 'contract-info', '--plan', 'pro')).pop()!;
    const key = (await cli(s.env, 'keys', 'create', '--account', account, '--name', 'info')).pop()!;
    const credits = async () => Number((await cli(s.env, 'accounts', 'credits', account)).pop());
    const info = async (url: string) => {
      const res = await fetch(`${s.base}/v1/info?url=${encodeURIComponent(url)}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const before = await credits();
    const txt = await info(fx.url('/docs/readme.txt'));
    assert.equal(txt.status, 404, JSON.stringify(txt.body));
    assert.match(txt.body.detail, /not a video page, a playlist of one video, or a media file/);
    assert.equal(await credits(), before, 'an unsupported URL is not charged');

    const page = await info(fx.url('/watch/og-twice'));
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.equal(page.body.title, FIXTURE.page.title);
    assert.ok(Math.abs(page.body.duration - FIXTURE.durationSeconds) < 0.5, `duration ${page.body.duration}`);
    assert.equal(await credits(), before - 1);
  });

  it('8. failures say what a person can act on: no tool internals (HTTP 404 source, a host with no DNS record, a page without media)', async () => {
    const cases = [
      [fx.url('/media/missing.mp4'), /^The source is not available/],
      ['http://no-such-host.invalid/video.mp4', /^The source is not available: no-such-host\.invalid does not resolve/],
      [fx.url('/watch/nomedia'), /^No platform handler supports/],
    ] as const;
    const jobs = await Promise.all(cases.map(async ([url]) => (await s.api('POST', '/v1/fingerprint', { url })).body.job_id as string));
    for (const [i, id] of jobs.entries()) {
      const job = await s.waitJob(id, 120_000);
      assert.equal(job.status, 'failed');
      assert.match(job.error_message!, cases[i]![1]);
      assert.doesNotMatch(job.error_message!, /caused by|HTTPError|Traceback|ERROR:|<[A-Za-z]+Error|\[generic\]|yt-dlp|ffmpeg/i, job.error_message!);
    }
    // the synchronous read says the same at once, instead of timing out
    const t0 = Date.now();
    const info = await s.api('GET', `/v1/info?url=${encodeURIComponent('http://no-such-host.invalid/video.mp4')}`);
    assert.equal(info.status, 404, JSON.stringify(info.body));
    assert.match(info.body.detail, /no-such-host\.invalid does not resolve/);
    assert.ok(Date.now() - t0 < 30_000, 'answered, not a 504 after the info timeout');
  });

  it('11. the CLI: accounts/keys --help, --add with a negative N, accounts plan changes the limit within 2 s', async () => {
    for (const topic of ['accounts', 'keys']) {
      const lines = await cli(s.env, topic, '--help');
      assert.ok(lines.some((l) => l.includes(`${topic} create`)), `${topic} --help`);
    }
    const start = await s.credits();
    assert.equal(Number((await cli(s.env, 'accounts', 'credits', s.accountId, '--add', '-5')).pop()), start - 5);
    assert.equal(Number((await cli(s.env, 'accounts', 'credits', s.accountId, '--add', '5')).pop()), start);
    await cli(s.env, 'accounts', 'plan', s.accountId, '--plan', 'growth');
    // API processes trust a verified key (and its account's plan) for 2 s
    let acct = await s.api('GET', '/v1/account');
    for (let i = 0; i < 30 && acct.body.plan !== 'growth'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      acct = await s.api('GET', '/v1/account');
    }
    assert.equal(acct.body.plan, 'growth');
    assert.equal(acct.body.rate_limit_per_minute, PLANS.growth.requestsPerMinute);
    assert.equal(acct.headers.get('x-ratelimit-limit'), String(PLANS.growth.requestsPerMinute));
    await assert.rejects(cli(s.env, 'accounts', 'plan', s.accountId, '--plan', 'platinum'), /plan/);
    await cli(s.env, 'accounts', 'plan', s.accountId, '--plan', 'enterprise');
  });

  // last: its jobs and info reads keep the workers busy for a while after it ends
  it(`Schemathesis (${FUZZ_SECONDS} s, every phase, ${CHECKS.length} checks) finds 0 failures and 0 errors`, async function () {
    this.timeout((FUZZ_SECONDS + 240) * 1000);
    // identifiers for the {id} routes: finished jobs, an endpoint, a result link
    const ids: string[] = [];
    for (const [p, body] of [['/v1/fingerprint', { url: fx.url('/media/v480.mp4') }], ['/v1/preview', { url: fx.url('/watch/trailer'), preview_type: 'thumbnail' }]] as const) {
      const res = await s.api('POST', p, body);
      assert.equal(res.status, 202);
      ids.push(res.body.job_id as string);
    }
    const done = await Promise.all(ids.map((id) => s.waitJob(id)));
    assert.deepEqual(done.map((j) => j.status), ['completed', 'completed']);
    const hook = await s.api('POST', '/v1/webhooks', { url: fx.url('/hooks/contract'), events: [] });
    assert.equal(hook.status, 201);

    // the document as served, with its examples pointed at the fixture platform (this machine has no internet)
    const sources = [fx.url('/media/v480.mp4'), fx.url('/watch/trailer'), fx.url('/watch/og-twice'), fx.url('/media/quiet.m4a')];
    const text = JSON.stringify(doc).replaceAll('https://www.youtube.com/watch?v=aqz-KE-bpKQ', sources[0]!).replaceAll('https://example.com/hooks/media', fx.url('/hooks/contract'));
    assert.doesNotMatch(text, /youtube\.com|example\.com/, 'every example URL replaced');
    const schemaFile = path.join(dir, 'openapi.fixture.json');
    fs.writeFileSync(schemaFile, text);

    const lines = [
      `headers = { Authorization = ${toml(`Bearer ${s.key}`)} }`,
      'request-timeout = 30',
      '[parameters]',
      '"body.url" = { dictionary = "sources" }',
      '"query.url" = { dictionary = "sources" }',
      '"body.webhook_url" = { dictionary = "hooks", probability = 0.5 }',
      '"path.job_id" = { dictionary = "jobs", probability = 0.8 }',
      '"path.id" = { dictionary = "webhooks", probability = 0.8 }',
      '"path.token" = { dictionary = "tokens", probability = 0.8 }',
      '[dictionaries.sources]',
      `values = ${toml(sources)}`,
      '[dictionaries.hooks]',
      `values = ${toml([fx.url('/hooks/contract')])}`,
      '[dictionaries.jobs]',
      `values = ${toml(ids)}`,
      '[dictionaries.webhooks]',
      `values = ${toml([String(hook.body.id)])}`,
      '[dictionaries.tokens]',
      `values = ${toml(done.map((j) => j.download_url!.split('/').pop()!))}`,
      '[[operations]]',
      `include-operation-id = ${toml(DOCUMENTED_422)}`,
      'checks.positive_data_acceptance.expected-statuses = ["2xx", 401, 403, 404, 409, 422]',
    ];
    const config = path.join(dir, 'schemathesis.toml');
    fs.writeFileSync(config, lines.join('\n') + '\n');
    // one worker: Hypothesis parses lambda sources with Python's ast, which is not thread-safe on 3.11
    // ("AST constructor recursion depth mismatch" from two workers in a CI run)
    let out: string;
    let code = 0;
    try {
      ({ stdout: out } = await run(
        path.join(VENV, 'schemathesis'),
        ['--config-file', config, 'run', schemaFile, '--url', s.base, '--checks', CHECKS.join(','), '--max-time', String(FUZZ_SECONDS), '--workers', '1', '--no-color'],
        { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
      ));
    } catch (err) {
      const e = err as { code: number; stdout: string };
      code = e.code;
      out = e.stdout;
    }
    const summary = out.slice(out.lastIndexOf('SUMMARY'));
    assert.equal(code, 0, out.slice(out.indexOf('FAILURES') >= 0 ? out.indexOf('FAILURES') : out.indexOf('ERRORS')).slice(0, 20_000));
    assert.match(summary, /Tested: 22/, summary);
    const generated = Number(/(\d+) generated/.exec(summary)?.[1] ?? 0);
    assert.ok(generated > 300, `Schemathesis generated only ${generated} test cases:\n${summary}`);
    // the ids reached their routes: finished jobs were read, not only 404s
    const log = fs.readFileSync(path.join(s.dataDir, 'serve.log'), 'utf8');
    assert.doesNotMatch(log, /SQLITE_ERROR|Internal Server Error/);
  });
});
