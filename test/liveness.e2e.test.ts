import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fixtureCacheDir, serveThrottled, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { ledgerByJob, querySqlite } from './helpers/ledger';
import { cli, waitFor } from './helpers/processes';
import { startServeStack, type JobBody, type ServeStack } from './helpers/serve-stack';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';
const SLOW_BYTES_PER_SECOND = 40_000;
// the download whose progress is measured: about 10 s to probe (the source ignores Range), then 10 s to download
const STEADY_BYTES_PER_SECOND = 80_000;
// the backlog's source: about 3 minutes a download, so none can finish before the test cancels it, however busy the machine
const SLOWER_BYTES_PER_SECOND = 4_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * ~5 minutes of real speech (Debian's LibriVox test clips, four times over) as one WAV, served over
 * HTTP: long enough that base-model recognition runs for many seconds even on an idle machine.
 */
async function longSpeech(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const clips = fs.readdirSync(LIBRIVOX).filter((f) => f.endsWith('.wav')).sort();
  const once = clips.map((c) => `file '${path.join(LIBRIVOX, c)}'`);
  fs.writeFileSync(path.join(dir, 'list.txt'), [...once, ...once, ...once, ...once].join('\n'));
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', path.join(dir, 'list.txt'), '-ar', '16000', '-ac', '1', path.join(dir, 'talk.wav')]);
  const server = http.createServer((_req, res) => {
    const buf = fs.readFileSync(path.join(dir, 'talk.wav'));
    res.writeHead(200, { 'Content-Type': 'audio/wav', 'Content-Length': buf.length }).end(buf);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/talk.wav`, close: () => new Promise((r) => server.close(() => r())) };
}

/**
 * The warm faster-whisper runners of this serve (its process tree only: other services on the host
 * run their own). They serve many jobs, so their command line names none; a cancel kills the one
 * working for the job, and a fresh one (a new pid) takes its place.
 */
function warmRunnersOf(rootPid: number): Promise<number[]> {
  return new Promise((resolve) =>
    execFile('ps', ['-e', '-o', 'pid=,ppid=,args='], (err, out) => {
      if (err) return resolve([]);
      const rows = out.trim().split('\n').map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l)).filter((m): m is RegExpExecArray => !!m);
      const tree = new Set([rootPid]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const m of rows) if (tree.has(Number(m[2])) && !tree.has(Number(m[1]))) grew = tree.add(Number(m[1])) !== null;
      }
      resolve(rows.filter((m) => tree.has(Number(m[1])) && /whisper_runner\.py --serve/.test(m[3]!)).map((m) => Number(m[1])));
    }),
  );
}

/** Processes whose command line names the job (yt-dlp's output path, ffmpeg's input, the Whisper runner's request). */
function processesOf(jobId: string): Promise<string[]> {
  return new Promise((resolve) => execFile('pgrep', ['-af', jobId], (err, out) => resolve(err ? [] : out.trim().split('\n').filter((l) => !l.includes('pgrep')))));
}

describe('liveness: cancellation stops real tools; progress moves; info reads never wait behind jobs (real serve)', function () {
  this.timeout(20 * 60_000);
  let fx: FixturePlatform;
  let speech: Awaited<ReturnType<typeof longSpeech>>;
  let rx: Receiver;
  let s: ServeStack;
  let tmp: string;
  let endpointSecret: string;
  const slowUrl = () => fx.url('/slow/v1080.mp4');
  const slowerUrl = () => fx.url('/slower/v1080.mp4');
  const steadyUrl = () => fx.url('/steady/v1080.mp4');

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-liveness-'));
    fx = await startFixturePlatform({
      extraRoutes: (_req, res, p) => {
        const rates: Record<string, number> = { '/slow/v1080.mp4': SLOW_BYTES_PER_SECOND, '/steady/v1080.mp4': STEADY_BYTES_PER_SECOND, '/slower/v1080.mp4': SLOWER_BYTES_PER_SECOND };
        const rate = rates[p] ?? 0;
        if (!rate) return false;
        serveThrottled(res, path.join(fixtureCacheDir(), 'media', 'v1080.mp4'), rate);
        return true;
      },
    });
    speech = await longSpeech(tmp);
    rx = await startReceiver();
    s = await startServeStack({ name: 'liveness', plan: 'business', env: { WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,2,4,6' } });
    // every job's event also goes to an endpoint, signed with its own secret
    const endpoint = await s.api('POST', '/v1/webhooks', { url: rx.url('/endpoint'), events: [] });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    endpointSecret = endpoint.body.secret as string;
  });
  after(async () => {
    await s?.stop();
    await rx?.close();
    await speech?.close();
    await fx?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** Cancels a running job once `ready` holds, and checks everything the cancellation promises. */
  /** `tool` names a process of the job; 'warm-whisper' is the speech worker's warm runner (busy with the job). */
  async function cancelWhileRunning(jobId: string, tool: RegExp | 'warm-whisper', ready: (j: JobBody) => boolean): Promise<{ secondsToStop: number }> {
    const running = await waitFor(
      `a ${String(tool)} process of job ${jobId}`,
      async () => {
        const job = (await s.api('GET', `/v1/jobs/${jobId}`)).body as JobBody;
        if (tool === 'warm-whisper') {
          const runners = await warmRunnersOf(s.svc.child.pid!);
          return ready(job) && job.status === 'processing' && runners.length > 0 ? runners.map(String) : undefined;
        }
        const procs = await processesOf(jobId);
        return ready(job) && procs.some((p) => tool.test(p)) ? procs : undefined;
      },
      180_000,
      200,
    );
    assert.ok(running.length > 0);
    const cancelledAt = Date.now();
    const res = await s.api('POST', `/v1/jobs/${jobId}/cancel`);
    assert.ok(res.status === 200 || res.status === 202, `${res.status} ${JSON.stringify(res.body)}`);
    let left: string[] = [];
    const stopped = async () => {
      left = await processesOf(jobId);
      if (left.length > 0) return false;
      if (tool !== 'warm-whisper') return true;
      const now = await warmRunnersOf(s.svc.child.pid!);
      left = running.filter((pid) => now.includes(Number(pid)));
      return left.length === 0;
    };
    const gone = await waitFor(`job ${jobId}'s processes to stop`, async () => ((await stopped()) ? Date.now() : undefined), 60_000, 100).catch((err: Error) => {
      throw new Error(`${err.message}; still running: ${left.join(' | ')}`);
    });
    const job = await s.waitJob(jobId, 60_000);
    assert.equal(job.status, 'failed');
    assert.equal(job.error_message, 'cancelled by the client');
    assert.equal(job.download_url, null);
    // nothing left behind: no scratch files, no output
    assert.ok(!fs.existsSync(path.join(s.dataDir, 'work', jobId)), 'the work folder is removed');
    assert.ok(!fs.existsSync(path.join(s.dataDir, 'files', jobId)), 'no output is kept');
    // refunded exactly once; job.failed delivered with the reason
    const ledger = (await ledgerByJob(path.join(s.dataDir, 'mediasvc.sqlite'))).get(jobId);
    assert.deepEqual(ledger, { charges: 1, refunds: 1 });
    const event = await waitFor(`job.failed of ${jobId}`, async () => rx.received.map((r) => JSON.parse(r.body)).find((b) => b.data.job_id === jobId), 30_000, 100);
    assert.equal(event.event, 'job.failed');
    assert.equal(event.data.error_message, 'cancelled by the client');
    // a finished job cannot be cancelled again
    const again = await s.api('POST', `/v1/jobs/${jobId}/cancel`);
    assert.equal(again.status, 409);
    return { secondsToStop: (gone - cancelledAt) / 1000 };
  }

  it('cancelling a long download kills yt-dlp, fails the job with "cancelled by the client", refunds once and delivers job.failed', async () => {
    const before = await s.credits();
    const created = await s.api('POST', '/v1/download', { url: slowUrl(), webhook_url: rx.url('/cancel-download') });
    assert.equal(created.status, 202);
    const { secondsToStop } = await cancelWhileRunning(created.body.job_id, /yt-dlp/, (j) => j.status === 'processing' && (j.progress ?? 0) > 0);
    assert.equal(await s.credits(), before);
    console.log(`      download cancelled: its processes were gone ${secondsToStop.toFixed(1)} s after the cancel call`);
  });

  it('cancelling a long transcription kills faster-whisper the same way', async () => {
    const before = await s.credits();
    const created = await s.api('POST', '/v1/transcribe', { url: speech.url, model_size: 'base', webhook_url: rx.url('/cancel-transcribe') });
    assert.equal(created.status, 202);
    // the warm runner working for the job is killed (and replaced by a fresh one for the next job)
    const { secondsToStop } = await cancelWhileRunning(created.body.job_id, 'warm-whisper', (j) => (j.progress ?? 0) >= 20);
    assert.equal(await s.credits(), before);
    console.log(`      transcription cancelled: faster-whisper was gone ${secondsToStop.toFixed(1)} s after the cancel call`);
  });

  it('progress moves while a job runs (cadence measured)', async () => {
    const created = await s.api('POST', '/v1/download', { url: steadyUrl(), format: 'mkv' });
    const samples: { t: number; progress: number; status: string }[] = [];
    const t0 = Date.now();
    for (;;) {
      const job = (await s.api('GET', `/v1/jobs/${created.body.job_id}`)).body as JobBody;
      samples.push({ t: (Date.now() - t0) / 1000, progress: job.progress ?? -1, status: job.status });
      if (job.status === 'completed' || job.status === 'failed') break;
      await sleep(250);
    }
    assert.equal(samples.at(-1)!.status, 'completed');
    const running = samples.filter((x) => x.status === 'processing');
    const values = running.map((x) => x.progress);
    assert.deepEqual(values, [...values].sort((a, b) => a - b), 'progress never goes back');
    const changes = running.filter((x, i) => i === 0 || x.progress !== running[i - 1]!.progress);
    assert.ok(changes.length >= 5, `progress moved through ${changes.length} values: ${values.join(',')}`);
    const gaps = changes.slice(1).map((x, i) => x.t - changes[i]!.t);
    console.log(`      progress cadence: ${changes.length} distinct values over ${running.at(-1)!.t.toFixed(1)} s of processing; longest wait for a new value ${Math.max(...gaps).toFixed(1)} s, median ${gaps.sort((a, b) => a - b)[Math.floor(gaps.length / 2)]!.toFixed(1)} s`);
  });

  it("a free account's jobs run two at a time, the plan's slots; the rest wait pending and start in the order they came (jobs a freed pair of slots admits together start together)", async () => {
    const accountId = (await cli(s.env, 'accounts', 'create', '--name', 'slots', '--plan', 'free')).pop()!;
    const key = (await cli(s.env, 'keys', 'create', '--account', accountId, '--name', 'slots key')).pop()!;
    // the free plan's 10 requests a minute: 6 creates and one account read, then the database is watched
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(s.base + p, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await call('POST', '/v1/preview', { url: fx.url('/media/v1080.mp4'), preview_type: 'thumbnail', timestamp: String((i + 1) / 4) });
      assert.equal(created.status, 202, JSON.stringify(created.body));
      ids.push(created.body.job_id as string);
    }
    const account = await call('GET', '/v1/account');
    assert.ok(account.body.running_jobs <= 2, JSON.stringify(account.body));
    const db = path.join(s.dataDir, 'mediasvc.sqlite');
    type Row = { id: string; status: string; created_at: number; started_at: number | null; completed_at: number | null };
    const rows = await waitFor(
      'the six jobs to end',
      async () => {
        const r = await querySqlite<Row>(db, `select id, status, created_at, started_at, completed_at from jobs where account_id = ? order by created_at, id`, [accountId]);
        return r.length === 6 && r.every((x) => x.status === 'completed' || x.status === 'failed') ? r : undefined;
      },
      300_000,
      500,
    );
    assert.deepEqual(rows.map((r) => r.status), Array(6).fill('completed'), JSON.stringify(rows));
    // the most running at one instant, from the recorded intervals (not from polling luck)
    const edges = rows.flatMap((r) => [[Number(r.started_at), 1], [Number(r.completed_at), -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let most = 0;
    for (const [, d] of edges) most = Math.max(most, (now += d));
    const byCreation = ids.map((id) => rows.find((r) => r.id === id)!);
    const startOrder = [...rows].sort((a, b) => Number(a.started_at) - Number(b.started_at)).map((r) => ids.indexOf(r.id));
    const t0 = Math.min(...rows.map((r) => Number(r.started_at)));
    const spans = byCreation.map((r, i) => `${i}: ${((Number(r.started_at) - t0) / 1000).toFixed(2)}-${((Number(r.completed_at) - t0) / 1000).toFixed(2)} s`).join(', ');
    console.log(`      account read right after the creates: ${account.body.running_jobs} running, ${account.body.queued_jobs} queued; at most ${most} ran at once; start order ${startOrder.join(' ')} (${spans})`);
    assert.ok(most <= 2, `${most} of a free account's jobs ran at once`);
    // in order: when a job started, the jobs running then and its older jobs still waiting left it a slot,
    // so a younger job goes first only when a freed pair of slots admitted both (their claims race)
    for (const [j, r] of byCreation.entries()) {
      const t = Number(r.started_at);
      const runningThen = byCreation.filter((x, i) => i !== j && Number(x.started_at) <= t && Number(x.completed_at) > t).length;
      const olderWaiting = byCreation.filter((x, i) => i < j && Number(x.started_at) > t).length;
      assert.ok(runningThen + olderWaiting < 2, `job ${j} started while ${runningThen} ran and ${olderWaiting} older waited: ${spans}`);
    }
    assert.deepEqual(startOrder.slice(0, 2).sort(), [0, 1], `the first two created started first: ${startOrder.join(' ')}`);
  });

  it('info reads have capacity of their own: answered while 40 download jobs queue up (latency measured); cancelling them refunds each once', async () => {
    const idleStart = Date.now();
    assert.equal((await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/trailer'))}`)).status, 200);
    const idleSeconds = (Date.now() - idleStart) / 1000;
    const backlog: string[] = [];
    for (let i = 0; i < 40; i++) backlog.push((await s.api('POST', '/v1/download', { url: slowerUrl() })).body.job_id);
    await sleep(3000); // let the downloads take every media-fetch slot
    const busy = (await Promise.all(backlog.map(async (id) => ((await s.api('GET', `/v1/jobs/${id}`)).body as JobBody).status))).filter((st) => st === 'processing').length;
    const t = Date.now();
    const info = await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/trailer'))}`);
    const seconds = (Date.now() - t) / 1000;
    assert.equal(info.status, 200, JSON.stringify(info.body));
    assert.equal(info.body.title, 'Fixture Trailer');
    console.log(`      info: ${idleSeconds.toFixed(2)} s with no jobs; ${seconds.toFixed(2)} s under a backlog of 40 downloads (${busy} processing, the media-fetch slots full)`);
    // cancel the whole backlog at once, as a client would: running and queued jobs alike end failed and refunded once.
    // (One at a time, each cancel waits up to 5 s for its job to end, and at the 40 kB/s source a download ended
    // in about 19 s: on a busy machine later cancels found their jobs completed and got 409.)
    const cancels = await Promise.all(backlog.map(async (id) => ({ id, res: await s.api('POST', `/v1/jobs/${id}/cancel`) })));
    const refused = cancels.filter((c) => c.res.status !== 200 && c.res.status !== 202).map((c) => `${c.id}: ${c.res.status} ${JSON.stringify(c.res.body)}`);
    assert.deepEqual(refused, [], 'every cancel accepted');
    for (const id of backlog) assert.equal((await s.waitJob(id, 120_000)).error_message, 'cancelled by the client');
    const ledger = await ledgerByJob(path.join(s.dataDir, 'mediasvc.sqlite'));
    for (const id of backlog) assert.deepEqual(ledger.get(id), { charges: 1, refunds: 1 }, id);
  });

  it('no secret that signed this run\'s deliveries is in any file the service wrote, but the key file (logs, Temporal histories, database)', async () => {
    const accountSecret = (await cli(s.env, 'accounts', 'webhook-secret', s.accountId)).pop()!;
    assert.ok(rx.received.some((r) => r.path === '/endpoint') && rx.received.some((r) => r.path !== '/endpoint'), 'both secrets signed deliveries');
    const needles = [accountSecret, endpointSecret].flatMap((x) => [x, x.slice('whsec_'.length)]).map((x) => Buffer.from(x));
    const holding: string[] = [];
    const scan = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) scan(p);
        else if (e.isFile() && e.name !== 'secrets.key' && needles.some((n) => fs.readFileSync(p).includes(n))) holding.push(path.relative(s.dataDir, p));
      }
    };
    scan(s.dataDir);
    assert.ok(fs.existsSync(path.join(s.dataDir, 'temporal.sqlite')) && fs.existsSync(path.join(s.dataDir, 'serve.log')));
    assert.deepEqual(holding, []);
  });
});
