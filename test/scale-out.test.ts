// The README's scale-out layout with nothing shared but PostgreSQL, Temporal and the bucket: a Temporal
// server built from go.temporal.io/server on PostgreSQL, results in an S3-compatible bucket (moto), and
// the API and each worker in a mount namespace of its own with a private, empty data directory.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, GetObjectCommand } from '@aws-sdk/client-s3';
import { Connection, WorkflowClient } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { FIXTURE, fixtureCacheDir, serveThrottled, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { ffprobe, videoStream } from './helpers/media';
import { PT_VIDEOS, startPeerTubeFixture, type PeerTubeFixture } from './helpers/peertube-fixture';
import { ledgerByJobOnPostgres } from './helpers/ledger';
import { pgQuery, pgRows, startPostgres, type TestPostgres } from './helpers/postgres';
import { cli, freePort, startService, stopService, waitFor, waitHealthy, type Service } from './helpers/processes';
import { startS3Server, type S3Server } from './helpers/s3-server';
import { serveSpeechFiles, type SpeechFiles } from './helpers/speech-fixtures';
import { startTemporalCluster, type TemporalCluster } from './helpers/temporal-cluster';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const BUCKET = 'scale-out';
// a source that honours Range at 40 kB/s: a GIF of it keeps a media-process step busy for seconds
const SLOW_SOURCE = '/slow-range/v720.mp4';
const SLOW_BYTES_PER_SECOND = 40_000;

interface JobView {
  job_id: string;
  status: string;
  job_type: string;
  error_message: string | null;
  download_url: string | null;
  result_data: Record<string, unknown>;
}

describe('scale-out: one API and per-queue workers, each with a private disk, sharing only PostgreSQL, a Temporal cluster and the bucket', function () {
  this.timeout(20 * 60_000);
  let fx: FixturePlatform;
  let pt: PeerTubeFixture;
  let speech: SpeechFiles;
  let pg: TestPostgres;
  let s3: S3Server;
  let temporal: TemporalCluster;
  let dir: string;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let api: Service;
  const workers = new Map<string, Service>();
  let base: string;
  let key: string;

  const auth = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
  const create = async (route: string, body: Record<string, unknown>): Promise<string> => {
    const res = await fetch(`${base}${route}`, { method: 'POST', headers: auth(), body: JSON.stringify(body) });
    const json = (await res.json()) as { job_id: string };
    assert.equal(res.status, 202, `${route}: ${JSON.stringify(json)}`);
    return json.job_id;
  };
  const readJob = async (id: string) => (await (await fetch(`${base}/v1/jobs/${id}`, { headers: auth() })).json()) as JobView;
  const waitJob = (id: string) =>
    waitFor(`job ${id}`, async () => {
      const job = await readJob(id);
      return job.status === 'completed' || job.status === 'failed' ? job : undefined;
    }, 600_000, 500);
  const bucketObjects = async (prefix: string) => ((await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);
  const bucketBytes = async (k: string) => Buffer.from(await (await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: k }))).Body!.transformToByteArray());
  const startApi = () => {
    api = startService(['api'], env, path.join(dir, `api-${Date.now()}.log`), { privateDir: dataDir });
    return waitHealthy(base, api);
  };

  before(async () => {
    assert.equal(process.getuid?.(), 0, 'each process gets a mount namespace of its own (unshare --mount), which needs root');
    fx = await startFixturePlatform({
      extraRoutes: (req, res, p) => {
        if (p !== SLOW_SOURCE) return false;
        serveThrottled(res, path.join(fixtureCacheDir(), 'media', 'v720.mp4'), SLOW_BYTES_PER_SECOND, req);
        return true;
      },
    });
    pt = await startPeerTubeFixture();
    speech = await serveSpeechFiles();
    pg = await startPostgres();
    // the service reaches the bucket through a proxy that a fault test can close or turn to 503s
    s3 = await startS3Server({ faultProxy: true });
    await s3.createBucket(BUCKET);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-scale-'));
    temporal = await startTemporalCluster(pg, path.join(dir, 'temporal'));
    // every process mounts its own empty tmpfs here: nothing one writes is seen by another
    dataDir = path.join(dir, 'data');
    fs.mkdirSync(dataDir);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      DATABASE_URL: await pg.createDatabase('mediasvc'),
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: dataDir,
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      ALLOW_PRIVATE_NETWORK: '1',
      // one key for every process, as a deployment gives them (there is no shared key file)
      SECRETS_KEY: crypto.randomBytes(32).toString('base64'),
      // the fault tests wait for every job's event: a delivery that met an outage is tried again within seconds
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,5,20,60',
      ...s3.env(BUCKET),
    };
    await cli(env, 'migrate');
    await startApi();
    // two media-process workers: one is killed mid-job
    for (const name of ['control', 'webhooks', 'media-info', 'media-fetch', 'media-process', 'media-process-2', 'media-speech']) {
      workers.set(name, startService(['worker', '--queues', name.replace(/-2$/, '')], env, path.join(dir, `worker-${name}.log`), { privateDir: dataDir }));
    }
    await waitFor('every worker ready', async () => ([...workers.values()].every((w) => /mediasvc ready: workers for/.test(fs.readFileSync(w.logFile, 'utf8'))) ? true : undefined), 120_000, 500);
    const accountId = (await cli(env, 'accounts', 'create', '--name', 'scale', '--plan', 'business')).pop()!;
    key = (await cli(env, 'keys', 'create', '--account', accountId, '--name', 'k')).pop()!;
  });

  after(async () => {
    await Promise.all([api, ...workers.values()].filter(Boolean).map((s) => stopService(s)));
    await temporal?.stop();
    await s3?.close();
    await pg?.stop();
    await Promise.all([fx?.close(), pt?.close(), speech?.close()]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('registers the job search attributes on the cluster and finds jobs by them through SQL visibility', async () => {
    const id = await create('/v1/preview', { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail', timestamp: 1 });
    assert.equal((await waitJob(id)).status, 'completed');
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const client = new WorkflowClient({ connection, namespace: 'default' });
      const found = await waitFor('the job in visibility', async () => {
        const ids: string[] = [];
        for await (const wf of client.list({ query: `JobId = '${id}' AND JobStatus = 'completed'` })) ids.push(wf.workflowId);
        return ids.length ? ids : undefined;
      }, 60_000, 1000);
      assert.deepEqual(found, [`job-${id}`]);
    } finally {
      await connection.close();
    }
  });

  it('runs every operation once; each link serves the bytes in the bucket; nothing lands on a shared disk', async () => {
    const requests: [string, Record<string, unknown>][] = [
      ['/v1/download', { url: fx.url('/hls/master.m3u8'), quality: '480p', format: 'mp4' }],
      ['/v1/download', { url: fx.url('/watch/trailer'), quality: 'audio', format: 'wav', clip_start: '00:01', clip_end: '00:03' }],
      ...(['gif', 'thumbnail', 'mosaic', 'clip'] as const).map((t): [string, Record<string, unknown>] => ['/v1/preview', { url: fx.url('/watch/trailer'), preview_type: t }]),
      ['/v1/fingerprint', { url: fx.url('/media/v720.mp4'), hash_size: 8 }],
      ['/v1/transcribe', { url: speech.url('jfk.wav'), language: 'en', model_size: 'tiny' }],
      ['/v1/translate', { url: speech.url('jfk.wav'), source_language: 'en', target_language: 'es', model_size: 'tiny' }],
      ['/v1/comments', { url: pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), max_comments: 5 }],
    ];
    const ids = await Promise.all(requests.map(([route, body]) => create(route, body)));
    const jobs = await Promise.all(ids.map(waitJob));
    for (const job of jobs) assert.equal(job.status, 'completed', `${job.job_type}: ${job.error_message ?? ''}`);

    const files = new Map<string, Buffer>();
    for (const job of jobs) {
      if (!job.download_url) continue;
      const res = await fetch(job.download_url);
      assert.equal(res.status, 200, `${job.job_type} ${job.job_id}: ${res.status}`);
      const served = Buffer.from(await res.arrayBuffer());
      // the output, and for speech the decoding figures beside it
      const stored = (await bucketObjects(`files/${job.job_id}/`)).filter((k) => !k.endsWith('/decoding.json'));
      assert.equal(stored.length, 1, `${job.job_type} ${job.job_id}: ${stored.join(', ')}`);
      assert.ok(served.equals(await bucketBytes(stored[0]!)), `${job.job_type} ${job.job_id}: the link serves the bucket's object`);
      files.set(job.job_id, served);
    }
    const probe = async (id: string) => {
      const file = path.join(dir, `out-${id}`);
      fs.writeFileSync(file, files.get(id)!);
      return ffprobe(file);
    };
    const [hls, wav, gif, thumbnail, mosaic, clip, fingerprint, transcript, translation, comments] = jobs as [JobView, ...JobView[]] & JobView[];
    assert.equal(videoStream(await probe(hls!.job_id))?.height, 480);
    const audio = await probe(wav!.job_id);
    assert.equal(audio.format.format_name, 'wav');
    assert.ok(Math.abs(Number(audio.format.duration) - 2) < 0.2, String(audio.format.duration));
    for (const [job, codec] of [[gif, 'gif'], [thumbnail, 'mjpeg'], [mosaic, 'mjpeg'], [clip, 'h264']] as const) {
      assert.equal(videoStream(await probe(job!.job_id))?.codec_name, codec, String(job!.result_data.preview_type));
    }
    assert.match(String(fingerprint!.result_data.perceptual_hash), /^[0-9a-f]{16}$/, JSON.stringify(fingerprint!.result_data));
    assert.match((JSON.parse(files.get(transcript!.job_id)!.toString()) as { text: string }).text, /ask not what your country can do for you/i);
    assert.match(String(translation!.result_data.translated_text), /país/);
    assert.equal((JSON.parse(files.get(comments!.job_id)!.toString()) as { comments: unknown[] }).comments.length, 5);

    // each process wrote only to its own tmpfs; the folder they were all given is still empty here
    assert.deepEqual(fs.readdirSync(dataDir), []);
    // and the jobs' shared intermediates are gone from the bucket
    await waitFor('no work objects left', async () => ((await bucketObjects('work/')).length === 0 ? true : undefined), 60_000, 500);

    // the synchronous read runs on its own worker process
    const info = await fetch(`${base}/v1/info?url=${encodeURIComponent(fx.url('/media/v720.mp4'))}`, { headers: auth() });
    assert.equal(info.status, 200);
    assert.ok(Math.abs(((await info.json()) as { duration: number }).duration - FIXTURE.durationSeconds) < 0.5);
  });

  it('a media-process worker killed mid-job: the job completes on the other one', async () => {
    const id = await create('/v1/preview', { url: fx.url(SLOW_SOURCE), preview_type: 'gif' });
    const processWorkers = [workers.get('media-process')!, workers.get('media-process-2')!];
    const pidOf = (identity: string | null | undefined) => Number(String(identity).split('@')[0]);
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const handle = new WorkflowClient({ connection, namespace: 'default' }).getHandle(`job-${id}`);
      const STARTED = proto.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
      const killed = await waitFor('the job running a step on a media-process worker', async () => {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        const pids = pending.filter((a) => a.state === STARTED).map((a) => pidOf(a.lastWorkerIdentity));
        return processWorkers.find((w) => pids.includes(w.child.pid!));
      }, 180_000, 200);
      killed.signal('SIGKILL');
      await killed.exited;
      const job = await waitJob(id);
      assert.equal(job.status, 'completed', job.error_message ?? '');
      const file = path.join(dir, 'after-kill.gif');
      fs.writeFileSync(file, Buffer.from(await (await fetch(job.download_url!)).arrayBuffer()));
      assert.equal(videoStream(await ffprobe(file))?.codec_name, 'gif');
      // the history shows the step started on the killed worker, then again on the other one
      const starts = (await handle.fetchHistory()).events!.flatMap((e) => (e.activityTaskStartedEventAttributes ? [pidOf(e.activityTaskStartedEventAttributes.identity)] : []));
      const survivor = processWorkers.find((w) => w !== killed)!;
      assert.ok(starts.includes(survivor.child.pid!), `step starts by pid: ${starts.join(', ')}; survivor ${survivor.child.pid}, killed ${killed.child.pid}`);
    } finally {
      await connection.close();
    }
  });

  it('an API restarted between a job completing and its download loses nothing; an expired link answers 410', async () => {
    const job = await waitJob(await create('/v1/preview', { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail', timestamp: 2 }));
    assert.equal(job.status, 'completed', job.error_message ?? '');
    await stopService(api);
    await startApi();
    const res = await fetch(job.download_url!);
    assert.equal(res.status, 200);
    const [stored] = await bucketObjects(`files/${job.job_id}/`);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(await bucketBytes(stored!)));
    assert.equal((await readJob(job.job_id)).status, 'completed');

    await pgQuery(env.DATABASE_URL!, `UPDATE jobs SET expires_at = now() - interval '1 minute' WHERE id = '${job.job_id}'`);
    const gone = await fetch(job.download_url!);
    assert.equal(gone.status, 410, await gone.text());
  });
  // Each dependency fails once while a burst of quick jobs runs: outcomes are checked, never timings.
  describe('when a dependency fails during a burst of jobs', () => {
    let receiver: Receiver;
    // every answer the API gave during a burst, and those it must never give
    interface Answer { what: string; status: number; retryAfter: string | null; body: string }

    before(async () => {
      receiver = await startReceiver();
      const res = await fetch(`${base}/v1/webhooks`, { method: 'POST', headers: auth(), body: JSON.stringify({ url: receiver.url('/faults'), events: [] }) });
      assert.equal(res.status, 201, await res.text());
    });
    after(() => receiver?.close());

    /** Deliveries of `event` per job, as the receiver got them. */
    const eventsPerJob = (event: string) => {
      const out = new Map<string, number>();
      for (const r of receiver.received) {
        const body = JSON.parse(r.body) as { event: string; data: { job_id: string } };
        if (body.event === event) out.set(body.data.job_id, (out.get(body.data.job_id) ?? 0) + 1);
      }
      return out;
    };

    /**
     * Runs a burst of thumbnail and fingerprint jobs with `dependency` down for a while in the middle
     * (`down`, then `up` after `downMs`), with clients creating jobs and reading them and /readyz
     * throughout; then checks that every answer was the normal one or a 503 a person can act on, that
     * /readyz named the dependency while it was down and turned green by itself, and that every
     * accepted job completed, charged once, never refunded, reported completed once.
     */
    async function burstThroughFault(
      name: string,
      dependency: 'database' | 'temporal' | 'storage',
      fault: { down(): Promise<void>; up(): Promise<void>; downMs: number },
      opts: { uploads?: boolean } = {},
    ): Promise<void> {
      const JOBS = 12;
      // a job done before the fault: its client keeps downloading its file throughout
      const done = await waitJob(await create('/v1/preview', { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail', timestamp: 2 }));
      assert.equal(done.status, 'completed', done.error_message ?? '');
      const since = new Date();
      const accepted: string[] = [];
      const answers: Answer[] = [];
      const readiness: { at: number; body: Record<string, string> }[] = [];
      let attempts = 0;
      const call = async (what: string, url: string, init: RequestInit = {}): Promise<{ status: number; json: unknown }> => {
        try {
          const res = await fetch(url, { ...init, signal: AbortSignal.timeout(120_000) });
          const body = await res.text();
          answers.push({ what, status: res.status, retryAfter: res.headers.get('retry-after'), body });
          let json: unknown = null;
          try {
            json = JSON.parse(body);
          } catch {
            // checked below: every answer is JSON
          }
          return { status: res.status, json };
        } catch (err) {
          // no answer at all (connection refused or reset, or none within two minutes)
          answers.push({ what, status: 0, retryAfter: null, body: String(err) });
          return { status: 0, json: null };
        }
      };
      const createOne = async () => {
        const body = attempts++ % 2 === 0 ? { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail', timestamp: 1 } : { url: fx.url('/media/v480.mp4'), hash_size: 8 };
        const route = 'preview_type' in body ? '/v1/preview' : '/v1/fingerprint';
        const res = await call(`POST ${route}`, `${base}${route}`, { method: 'POST', headers: { ...auth(), 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify(body) });
        if (res.status === 202) accepted.push((res.json as { job_id: string }).job_id);
      };
      let phase = 'before' as 'before' | 'down' | 'after';
      let stopTraffic = false;
      // a client reading jobs and a probe reading /readyz, once a second each, for as long as the burst lasts
      const traffic = (async () => {
        for (let i = 0; !stopTraffic; i++) {
          const id = accepted[i % Math.max(1, accepted.length)];
          const [, ready] = await Promise.all([
            id ? call('GET /v1/jobs/:id', `${base}/v1/jobs/${id}`, { headers: auth() }) : Promise.resolve(null),
            call('GET /readyz', `${base}/readyz`),
            call('GET /v1/files/:token', done.download_url!),
            new Promise((r) => setTimeout(r, 1000)),
          ]);
          if (ready && ready.json && phase === 'down') readiness.push({ at: Date.now(), body: ready.json as Record<string, string> });
        }
      })();

      // half the burst is in flight when the dependency goes
      for (let i = 0; i < JOBS / 2; i++) await createOne();
      phase = 'down';
      await fault.down();
      const downUntil = Date.now() + fault.downMs;
      while (Date.now() < downUntil) {
        if (accepted.length < JOBS) await createOne();
        // an upload is a create that needs the bucket: stored, or refused with a 503
        if (opts.uploads) await call('POST /v1/uploads', `${base}/v1/uploads`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'audio/mpeg' }, body: fs.readFileSync(path.join(fixtureCacheDir(), 'media', 'audio.mp3')) });
        await new Promise((r) => setTimeout(r, 2000));
      }
      await fault.up();
      phase = 'after';
      const upAt = Date.now();
      const green = await waitFor('/readyz green again', async () => ((await call('GET /readyz', `${base}/readyz`)).status === 200 ? Date.now() : undefined), 300_000, 1000);
      while (accepted.length < JOBS) await createOne();
      const jobs = await Promise.all(accepted.map(waitJob));
      const ended = Date.now();
      stopTraffic = true;
      await traffic;

      const completed = jobs.filter((j) => j.status === 'completed');
      const failed = jobs.filter((j) => j.status === 'failed');
      const ledger = await ledgerByJobOnPostgres(env.DATABASE_URL!);
      const refunded = accepted.filter((id) => (ledger.get(id)?.refunds ?? 0) > 0);
      const tally = (list: Answer[]) => Object.entries(list.reduce<Record<string, number>>((acc, a) => ({ ...acc, [a.what]: (acc[a.what] ?? 0) + 1 }), {})).map(([k, n]) => `${k} ${n}`).join(', ');
      const unavailable = answers.filter((a) => a.status === 503);
      console.log(
        `      ${name}: ${accepted.length} jobs accepted, ${completed.length} completed, ${failed.length} failed, ${refunded.length} refunded; ` +
          `503s: ${unavailable.length} of ${answers.length} requests (${tally(unavailable) || 'none'}); ` +
          `recovered ${((green - upAt) / 1000).toFixed(1)} s after it came back (/readyz green), every accepted job ended ${((ended - upAt) / 1000).toFixed(1)} s after`,
      );

      // the API answered every request: normally, or 503 with Retry-After and a detail a person can act on
      const wrong = answers.filter((a) => {
        if (a.status === 0 || (a.status >= 500 && a.status !== 503)) return true;
        if (a.what === 'GET /readyz') return false;
        if (a.status !== 503) return a.status >= 400;
        const detail = (JSON.parse(a.body) as { detail?: unknown }).detail;
        return !a.retryAfter || !/^\d+$/.test(a.retryAfter) || typeof detail !== 'string' || !/unavailable.*Retry/s.test(detail);
      });
      assert.deepEqual(wrong, [], `answers other than the normal one or an actionable 503:\n${wrong.map((a) => `${a.what} ${a.status} retry-after=${a.retryAfter} ${a.body.slice(0, 300)}`).join('\n')}`);
      // /readyz named the missing dependency while it was missing
      assert.ok(readiness.some((r) => r.body.status === 'unavailable' && r.body[dependency] !== 'ok'), `/readyz during the outage: ${JSON.stringify(readiness.map((r) => r.body))}`);
      // no accepted job lost or failed: a dependency that comes back is waited for, not blamed on the job
      assert.deepEqual(failed.map((j) => `${j.job_id}: ${j.error_message}`), []);
      assert.equal(completed.length, JOBS);
      // charged exactly once each, never refunded; no job charged that a client was not told about
      for (const id of accepted) assert.deepEqual(ledger.get(id), { charges: 1, refunds: 0 }, `ledger of job ${id}`);
      const stored = (await pgRows<{ id: string }>(env.DATABASE_URL!, `select id from jobs where created_at >= '${since.toISOString()}'`)).map((r) => r.id);
      assert.deepEqual([...stored].sort(), [...accepted].sort(), 'the jobs stored are exactly those accepted');
      // each job reported completed exactly once (a retried delivery step must not send it again)
      const delivered = await waitFor('a job.completed event for every job', async () => {
        const perJob = eventsPerJob('job.completed');
        return accepted.every((id) => perJob.has(id)) ? perJob : undefined;
      }, 180_000, 500);
      await new Promise((r) => setTimeout(r, 2000));
      const twice = accepted.filter((id) => (eventsPerJob('job.completed').get(id) ?? 0) !== 1);
      assert.deepEqual(twice, [], `job.completed deliveries per job: ${JSON.stringify(Object.fromEntries(delivered))}`);
      assert.equal(accepted.filter((id) => eventsPerJob('job.failed').has(id)).length, 0);
    }

    it('PostgreSQL restarts mid-burst (down 30 s): creates get 503 while it is away, nothing is lost or charged twice', async () => {
      await burstThroughFault('PostgreSQL restart', 'database', { down: () => pg.stopServer(), up: () => pg.startServer(), downMs: 30_000 });
    });

    it('the Temporal cluster restarts mid-burst: jobs accepted meanwhile start once it is back, nothing is lost', async () => {
      await burstThroughFault('Temporal restart', 'temporal', { down: () => temporal.stopServer(), up: () => temporal.startServer(), downMs: 15_000 });
    });

    it('the bucket is unreachable for 30 s mid-burst (refused, then 503s): steps wait for it, nothing is lost', async () => {
      let half: NodeJS.Timeout | undefined;
      await burstThroughFault('bucket outage', 'storage', {
        down: async () => {
          await s3.outage('refuse');
          // the second half of the outage the bucket answers, but only 503s, as an overloaded S3 does
          half = setTimeout(() => void s3.outage('unavailable'), 15_000);
        },
        up: async () => {
          clearTimeout(half);
          await s3.outage(null);
        },
        downMs: 30_000,
      }, { uploads: true });
      // the jobs' shared intermediates are gone from the bucket once it is back
      await waitFor('no work objects left', async () => ((await bucketObjects('work/')).length === 0 ? true : undefined), 120_000, 1000);
    });
  });
});
