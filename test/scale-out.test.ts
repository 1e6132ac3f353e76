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
import { pgQuery, startPostgres, type TestPostgres } from './helpers/postgres';
import { cli, freePort, startService, stopService, waitFor, waitHealthy, type Service } from './helpers/processes';
import { startS3Server, type S3Server } from './helpers/s3-server';
import { serveSpeechFiles, type SpeechFiles } from './helpers/speech-fixtures';
import { startTemporalCluster, type TemporalCluster } from './helpers/temporal-cluster';

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
    s3 = await startS3Server();
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
});
