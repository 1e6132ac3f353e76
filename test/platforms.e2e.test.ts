// Platforms as operators meet them, on a real serve: every source connection through the operator's
// outbound proxy (webhooks never), cookies for one site only, and per-platform concurrency. The
// fixture platform notes who connected (the test proxy connects out from 127.0.0.2) and how many
// requests it had in flight at once.
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { fixtureCacheDir, serveIgnoringRange, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { PROXIED_FROM, startConnectProxy, type CountingProxy } from './helpers/counting-proxy';
import { cli, waitFor } from './helpers/processes';
import { startServeStack, type ServeStack } from './helpers/serve-stack';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const SESSION = 'session=members-only-7f3a';
const CAP = 2;
const METRICS_TOKEN = 'platforms-metrics-token-0123';
const THRESHOLD = 3;
/** A yt-dlp release other than the pinned one, and one too old for the options the workers pass (its self-check fails). */
const OTHER_YTDLP = '2026.10.21';
const INCOMPATIBLE_YTDLP = '2024.12.13';

describe('platforms end to end: the source proxy, cookies per site, per-platform concurrency (real serve)', function () {
  this.timeout(20 * 60_000);
  let fx: FixturePlatform;
  let up: CountingProxy;
  let rx: Receiver;
  let s: ServeStack;
  let port = 0;
  /** Every request the platform saw: its path and the peer it came from. */
  const seen: { path: string; peer: string }[] = [];
  /** Cookie headers that reached the other host a redirect leads to. */
  const elsewhereCookies: string[] = [];
  const slow = { active: 0, peak: 0, served: 0 };
  /** The platform that answers 429 to everything while `refusing`. */
  const throttled = { refusing: true, refused: 0, served: 0 };

  before(async () => {
    const media = path.join(fixtureCacheDir(), 'media', 'v480.mp4');
    const page = (src: string) => `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Members Only</title></head><body><video controls><source src="${src}" type="video/mp4"></video></body></html>`;
    const needsSession = (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
      if ((req.headers.cookie ?? '').split(/;\s*/).includes(SESSION)) return true;
      res.writeHead(403, { 'content-type': 'text/plain' }).end('sign in to watch');
      return false;
    };
    fx = await startFixturePlatform({
      extraRoutes: (req, res, p) => {
        seen.push({ path: p, peer: (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '') });
        if (p === '/members/page' && needsSession(req, res)) res.writeHead(200, { 'content-type': 'text/html' }).end(page('/members/v480.mp4'));
        else if (p === '/members/v480.mp4' && needsSession(req, res)) serveIgnoringRange(req, res, media);
        else if (p === '/members/moved-page' && needsSession(req, res)) res.writeHead(200, { 'content-type': 'text/html' }).end(page('/members/moved.mp4'));
        else if (p === '/members/moved.mp4' && needsSession(req, res)) res.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere/v480.mp4` }).end();
        else if (p === '/elsewhere/v480.mp4') {
          elsewhereCookies.push(req.headers.cookie ?? '');
          serveIgnoringRange(req, res, media);
        } else if (p === '/throttled/v480.mp4') {
          if (throttled.refusing) {
            throttled.refused++;
            res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '60' }).end('Too Many Requests');
          } else {
            throttled.served++;
            serveIgnoringRange(req, res, media);
          }
        } else if (p === '/slow-platform/v480.mp4') {
          slow.active++;
          slow.peak = Math.max(slow.peak, slow.active);
          res.on('close', () => {
            slow.active--;
            slow.served++;
          });
          serveIgnoringRange(req, res, media, 1500);
        } else return p.startsWith('/members/');
        return true;
      },
    });
    port = Number(new URL(fx.url('/')).port);
    up = await startConnectProxy('fetcher:pr0xy pass');
    rx = await startReceiver();
    s = await startServeStack({ name: 'platforms', plan: 'enterprise', env: { SOURCE_PROXY_URL: up.url, PLATFORM_CONCURRENCY: `127.0.0.1=${CAP}`, PLATFORM_BREAKER_THRESHOLD: String(THRESHOLD), PLATFORM_BREAKER_PROBE_SECONDS: '3', METRICS_TOKEN, LOG_LEVEL: 'debug', YTDLP_AUTO_UPDATE: 'daily' } });
  });
  after(async () => {
    await s?.stop();
    await rx?.close();
    await up?.close();
    await fx?.close();
  });

  async function job(p: string, body: Record<string, unknown>) {
    const res = await s.api('POST', p, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return s.waitJob(res.body.job_id as string, 300_000);
  }

  it('every source connection goes through SOURCE_PROXY_URL (a direct file, a page through yt-dlp, seek reads, an info read); no webhook does; its password is in no log', async () => {
    const from = seen.length;
    const jobs = await Promise.all([
      job('/v1/download', { url: fx.url('/media/v480.mp4'), webhook_url: rx.url('/platforms') }),
      job('/v1/preview', { url: fx.url('/watch/trailer'), preview_type: 'thumbnail', webhook_url: rx.url('/platforms') }),
      job('/v1/fingerprint', { url: fx.url('/watch/html5') }),
    ]);
    assert.deepEqual(jobs.map((j) => j.status), ['completed', 'completed', 'completed'], JSON.stringify(jobs.map((j) => j.error_message)));
    const info = await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/og-twice'))}`);
    assert.equal(info.status, 200, JSON.stringify(info.body));
    const requests = seen.slice(from);
    assert.ok(requests.length >= 6, `the platform saw ${requests.length} requests`);
    assert.deepEqual(requests.filter((r) => r.peer !== PROXIED_FROM), [], 'every request the platform saw came through the proxy');
    assert.ok(up.tunnels.every((t) => t.allowed), 'the proxy accepted the credentials');
    // the webhook deliveries arrived, and none went through the proxy
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(rx.received.filter((r) => r.path === '/platforms').length, 2);
    const rxPort = new URL(rx.url('/')).port;
    assert.deepEqual(up.tunnels.filter((t) => t.target.endsWith(`:${rxPort}`)), [], 'no webhook connection went through the source proxy');
    assert.doesNotMatch(fs.readFileSync(path.join(s.dataDir, 'serve.log'), 'utf8'), /pr0xy/, "the proxy's password is in no log line");
  });

  it("yt-dlp's warnings reach serve's log (once per run, with the job and the site) and /metrics by kind, from the tool worker process; /readyz names the JS runtime from yt-dlp's own report", async () => {
    const metrics = async () => (await (await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text());
    const other = async () => Number(/^mediasvc_ytdlp_warnings_total\{kind="other"\} (\d+)$/m.exec(await metrics())?.[1] ?? NaN);
    const before = await other();
    assert.ok(Number.isFinite(before), 'every kind is exposed from the start');
    assert.match(await metrics(), /^mediasvc_ytdlp_warnings_total\{kind="no_js_runtime"\} 0$/m);
    // a page yt-dlp reads with its generic extractor, which warns that it falls back on it
    const done = await job('/v1/download', { url: fx.url('/watch/html5') });
    assert.equal(done.status, 'completed', done.error_message ?? '');
    const lines = fs.readFileSync(path.join(s.dataDir, 'serve.log'), 'utf8').split('\n').filter((l) => l.includes('yt-dlp warned')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const ours = lines.filter((l) => l.job_id === done.job_id);
    assert.ok(ours.length >= 1, lines.map((l) => JSON.stringify(l)).join('\n'));
    assert.ok(ours.every((l) => l.level === 'warn' && l.site === '127.0.0.1' && typeof l.kind === 'string' && typeof l.warning === 'string'), JSON.stringify(ours));
    assert.ok(ours.some((l) => l.kind === 'other' && l.warning === '[generic] Falling back on generic information extractor'), JSON.stringify(ours));
    const counted = await waitFor('the warning counted in /metrics', async () => ((await other()) >= before + ours.filter((l) => l.kind === 'other').length ? other() : undefined), 10_000);
    assert.ok(counted > before);

    type Ready = { status: string; js_runtime: { runtime: string | null; supported: boolean; solves: boolean; challenge_providers: string } | null };
    // the report is asked for once when the API starts; null until it is in
    const ready = await waitFor('/readyz with yt-dlp\'s report', async () => {
      const body = (await (await fetch(`${s.base}/readyz`)).json()) as Ready;
      return body.js_runtime ? body : undefined;
    }, 60_000, 500);
    assert.equal(ready.status, 'ok');
    assert.deepEqual([ready.js_runtime?.runtime, ready.js_runtime?.supported, ready.js_runtime?.solves], ['deno', true, true], JSON.stringify(ready.js_runtime));
    assert.match(ready.js_runtime!.challenge_providers, /(^|, )deno(, |$)/);
  });

  it("cookies per site: the members' page fails without them and downloads with them; list shows no value; a redirect to another host carries none", async () => {
    const members = `http://localhost:${port}/members/page`;
    const without = await job('/v1/download', { url: members });
    assert.equal(without.status, 'failed', 'without cookies the platform refuses');

    const file = path.join(s.dataDir, 'cookies.txt');
    const expiry = Math.floor(Date.now() / 1000) + 86_400;
    const [name, value] = SESSION.split('=');
    fs.writeFileSync(file, ['# Netscape HTTP Cookie File', ['localhost', 'FALSE', '/', 'FALSE', expiry, name, value].join('\t'), ['.other.example', 'TRUE', '/', 'FALSE', expiry, 'other', 'never-sent'].join('\t'), ''].join('\n'));
    const set = await cli(s.env, 'cookies', 'set', '--site', 'localhost', file);
    assert.match(set.join('\n'), /stored 1 cookies for localhost .*left out 1 for other sites/);
    const listed = (await cli(s.env, 'cookies', 'list')).join('\n');
    assert.match(listed, /^localhost\t1 cookies\texpires \d{4}-/m);
    assert.doesNotMatch(listed, /members-only|never-sent/, 'list never shows a value');
    // sealed at rest: the value is not in the stored file
    const stored = fs.readdirSync(path.join(s.dataDir, 'cookies')).map((f) => fs.readFileSync(path.join(s.dataDir, 'cookies', f), 'utf8')).join('');
    assert.doesNotMatch(stored, /members-only/);

    const withCookies = await job('/v1/download', { url: members });
    assert.equal(withCookies.status, 'completed', withCookies.error_message ?? '');
    const moved = await job('/v1/download', { url: `http://localhost:${port}/members/moved-page` });
    assert.equal(moved.status, 'completed', moved.error_message ?? '');
    assert.ok(elsewhereCookies.length > 0, 'the redirect was followed to the other host');
    assert.deepEqual(elsewhereCookies.filter(Boolean), [], 'the other host got no cookie');
    // the same site's cookies never go to another site's source: 127.0.0.1 is not localhost
    const other = await job('/v1/download', { url: `http://127.0.0.1:${port}/members/page` });
    assert.equal(other.status, 'failed');

    assert.match((await cli(s.env, 'cookies', 'delete', '--site', 'localhost')).join('\n'), /cookies for localhost deleted/);
    assert.equal((await cli(s.env, 'cookies', 'list')).filter(Boolean).length, 0);
    assert.equal((await job('/v1/download', { url: members })).status, 'failed', 'deleted cookies are not used');
  });

  it(`PLATFORM_CONCURRENCY: 6 jobs on a platform capped at ${CAP} all complete, and it never sees more than ${CAP} requests at once`, async () => {
    const jobs = await Promise.all(Array.from({ length: 6 }, (_, i) => job(i % 2 ? '/v1/download' : '/v1/fingerprint', { url: fx.url('/slow-platform/v480.mp4') })));
    assert.deepEqual(jobs.map((j) => j.status), Array(6).fill('completed'), JSON.stringify(jobs.map((j) => j.error_message)));
    assert.ok(slow.served >= 6, `the platform served ${slow.served} requests`);
    assert.ok(slow.peak <= CAP, `the platform saw ${slow.peak} requests at once`);
    assert.equal(slow.peak, CAP, 'the cap was reached: the jobs did run side by side');
  });

  it(`tools yt-dlp update installs ${OTHER_YTDLP} while info reads run (none fails) and the next reads use it; an incompatible version fails its self-check and is never used; rollback`, async function () {
    const versionNow = async () => ((await (await fetch(`${s.base}/readyz`)).json()) as { yt_dlp: string }).yt_dlp;
    const pinned = await versionNow();
    assert.notEqual(pinned, OTHER_YTDLP);
    const reads: number[] = [];
    let reading = true;
    const lanes = Array.from({ length: 3 }, async () => {
      while (reading) reads.push((await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/html5'))}`)).status);
    });
    let update: string[];
    try {
      update = await cli(s.env, 'tools', 'yt-dlp', 'update', '--version', OTHER_YTDLP);
    } finally {
      reading = false;
      await Promise.all(lanes);
    }
    assert.match(update.join('\n'), new RegExp(`yt-dlp ${pinned.replace(/\./g, '\\.')} -> ${OTHER_YTDLP.replace(/\./g, '\\.')}`));
    assert.ok(reads.length >= 3, `${reads.length} info reads ran during the update`);
    assert.deepEqual(reads.filter((r) => r !== 200), [], `every info read during the update answered 200 (${reads.length})`);
    assert.equal(await versionNow(), OTHER_YTDLP);
    assert.equal(((await s.api('GET', '/v1/languages')).body.tools as { yt_dlp: string }).yt_dlp, OTHER_YTDLP);
    const metrics = await (await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    assert.match(metrics, new RegExp(`^mediasvc_ytdlp_info\\{version="${OTHER_YTDLP.replace(/\./g, '\\.')}"\\} 1$`, 'm'));
    // the next read runs the new version (each probe logs the version that read it)
    const logLines = () => fs.readFileSync(path.join(s.dataDir, 'serve.log'), 'utf8').split('\n').filter((l) => l.includes('yt-dlp read a source'));
    const seenBefore = logLines().length;
    assert.equal((await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/og-twice'))}`)).status, 200);
    const later = await waitFor('the next read logged', async () => (logLines().length > seenBefore ? logLines().slice(seenBefore) : undefined), 30_000);
    assert.ok(later.every((l) => l.includes(`"yt_dlp":"${OTHER_YTDLP}"`)), later.join('\n'));

    // a version that fails its self-check: exit 1, and the one in use stays
    const failed = await cli(s.env, 'tools', 'yt-dlp', 'update', '--version', INCOMPATIBLE_YTDLP).then(
      () => null,
      (err: { code: number; stdout: string }) => err,
    );
    assert.ok(failed, 'the update of an incompatible version exits non-zero');
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, new RegExp(`yt-dlp ${INCOMPATIBLE_YTDLP.replace(/\./g, '\\.')} failed its self-check; still using ${OTHER_YTDLP.replace(/\./g, '\\.')}`));
    assert.equal(await versionNow(), OTHER_YTDLP);
    assert.equal((await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/html5'))}`)).status, 200);

    assert.match((await cli(s.env, 'tools', 'yt-dlp', 'rollback')).join('\n'), new RegExp(`-> ${pinned.replace(/\./g, '\\.')}`));
    assert.equal(await versionNow(), pinned);

    // YTDLP_AUTO_UPDATE=daily: a Temporal Schedule runs the same update on a media-fetch worker
    const connection = await Connection.connect({ address: `127.0.0.1:${s.env.TEMPORAL_DEV_PORT}` });
    try {
      const schedule = await new Client({ connection }).schedule.getHandle('mediasvc-update-yt-dlp').describe();
      assert.equal(schedule.action.type === 'startWorkflow' ? schedule.action.workflowType : '', 'updateYtdlpWorkflow');
      assert.deepEqual(schedule.spec.calendars?.map((c) => [c.hour, c.minute]), [[[{ start: 4, end: 4, step: 1 }], [{ start: 17, end: 17, step: 1 }]]]);
    } finally {
      await connection.close();
    }
  });

  it(`a platform answering 429 to everything: after ${THRESHOLD} refusals its jobs wait pending (none fails), /readyz, /metrics and the log name it; recovered, they all complete, charged once`, async () => {
    const source = `http://localhost:${port}/throttled/v480.mp4`;
    const balance = async () => (await s.api('GET', '/v1/account')).body.balance as number;
    const before = await balance();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await s.api('POST', i % 2 ? '/v1/fingerprint' : '/v1/download', { url: source });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      ids.push(res.body.job_id as string);
    }
    const ready = async () => {
      const res = await fetch(`${s.base}/readyz`);
      return { status: res.status, body: (await res.json()) as { status: string; platforms: { platform: string; reason: string | null }[] } };
    };
    const degraded = await waitFor('/readyz naming the refusing platform', async () => {
      const r = await ready();
      return r.body.platforms.length ? r : undefined;
    }, 180_000, 500);
    assert.equal(degraded.status, 200, 'a refusing platform degrades the service; it is still ready');
    assert.equal(degraded.body.status, 'degraded');
    assert.deepEqual(degraded.body.platforms.map((p) => p.platform), ['localhost']);
    assert.match(degraded.body.platforms[0]!.reason ?? '', /too many requests/);
    const metrics = await (await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    assert.match(metrics, /^mediasvc_platform_breaker_open\{platform="localhost"\} 1$/m);
    assert.match(fs.readFileSync(path.join(s.dataDir, 'serve.log'), 'utf8'), /platform localhost is refusing requests/);

    // while it refuses, the jobs wait pending and only probes reach the platform
    const refusedAtOpen = throttled.refused;
    await new Promise((r) => setTimeout(r, 10_000));
    const waiting = await Promise.all(ids.map(async (id) => (await s.api('GET', `/v1/jobs/${id}`)).body.status as string));
    assert.deepEqual(waiting, Array(5).fill('pending'), 'every job waits, none failed');
    assert.ok(throttled.refused - refusedAtOpen <= 8, `${throttled.refused - refusedAtOpen} requests reached the refusing platform in 10 s: only probes should`);

    throttled.refusing = false;
    const done = await Promise.all(ids.map((id) => s.waitJob(id, 300_000)));
    assert.deepEqual(done.map((j) => j.status), Array(5).fill('completed'), JSON.stringify(done.map((j) => j.error_message)));
    const after = await ready();
    assert.deepEqual([after.status, after.body.status, after.body.platforms], [200, 'ok', []]);
    assert.equal(await balance(), before - 5, 'each job was charged once and refunded nothing');
  });
});
