// compose.scale-out.yaml as users start it: PostgreSQL, our Temporal server image, SeaweedFS, the
// API and a container per queue group. Where no registry is reachable, postgres:15 and
// chrislusf/seaweedfs:4.53 are stand-ins built here under the same names (test/container/images);
// the compose file is the published one, with only the test's private-network allowance laid over it.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../lib/config';
import { FIXTURE, fixtureCacheDir, serveThrottled, startFixturePlatform, type FixturePlatform } from '../helpers/fixture-platform';
import { ffprobe, videoStream } from '../helpers/media';
import { PT_VIDEOS, startPeerTubeFixture, type PeerTubeFixture } from '../helpers/peertube-fixture';
import { freePort } from '../helpers/processes';
import { accountClient, apiClient, compose, hostAddressFromContainers, podman, podmanUnusable, startContainerOrigin, until, waitReady, type ContainerOrigin } from './podman';
import { buildAllImages, TEMPORAL_IMAGE } from './images';

const LOGS = path.join(projectRoot, '.test-tmp/container');
// a source that honours Range at 40 kB/s: a GIF of it keeps a media-process step busy for a while
const SLOW_SOURCE = '/slow-range/v720.mp4';

describe('compose.scale-out.yaml: every role in its own container', function () {
  this.timeout(60 * 60_000);
  const project = `mediasvc-so-${crypto.randomBytes(3).toString('hex')}`;
  const figures: Record<string, string> = {};
  let c: ReturnType<typeof compose>;
  let fx: FixturePlatform;
  let pt: PeerTubeFixture;
  let speech: ContainerOrigin;
  let work: string;
  let base: string;
  let api: ReturnType<typeof apiClient>;

  before(async () => {
    const why = await podmanUnusable();
    if (why) throw new Error(`podman cannot run containers on this machine: ${why}`);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-scale-container-'));
    // done already when the embedded default's suite ran first
    const times = await buildAllImages();
    figures.temporal_build_s = String(times[TEMPORAL_IMAGE]);

    // the fixtures listen where containers reach this machine, and link to that address
    const gateway = await hostAddressFromContainers();
    const fxPort = await freePort();
    fx = await startFixturePlatform({
      host: '0.0.0.0',
      port: fxPort,
      baseUrl: `http://${gateway}:${fxPort}`,
      extraRoutes: (req, res, p) => {
        if (p !== SLOW_SOURCE) return false;
        serveThrottled(res, path.join(fixtureCacheDir(), 'media', 'v720.mp4'), 40_000, req);
        return true;
      },
    });
    const ptPort = await freePort();
    pt = await startPeerTubeFixture({ host: '0.0.0.0', port: ptPort, baseUrl: `http://${gateway}:${ptPort}` });
    speech = await startContainerOrigin(path.join(fixtureCacheDir(), 'media', 'v720.mp4'));

    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = { MEDIASVC_PORT: String(port), TEMPORAL_HOST_PORT: String(await freePort()), PUBLIC_BASE_URL: base, SECRETS_KEY: crypto.randomBytes(32).toString('base64') };
    c = compose(project, ['compose.scale-out.yaml', 'test/container/compose.scale-out.private-sources.yaml'], path.join(LOGS, `${project}.log`), env);
    const since = Date.now();
    await c.up();
    figures.up_to_ready_s = (await waitReady(base, since, 600_000)).toFixed(1);
    console.log(`      scale-out compose up to the API's /readyz 200: ${figures.up_to_ready_s} s`);
    api = await accountClient(c.container('api'), base, 'scale-out');
  });

  after(async () => {
    if (c) await c.down(true).catch((err) => console.log(`      compose down: ${(err as Error).message}`));
    await Promise.all([fx?.close(), pt?.close(), speech?.close()]);
    if (work) fs.rmSync(work, { recursive: true, force: true });
    console.log(`      scale-out figures: ${JSON.stringify(figures)}`);
  });

  it('runs every operation once, each result served from the bucket', async () => {
    const requests: [string, Record<string, unknown>][] = [
      ['/v1/download', { url: fx.url('/hls/master.m3u8'), quality: '480p', format: 'mp4' }],
      ['/v1/download', { url: fx.url('/watch/trailer'), quality: 'audio', format: 'wav', clip_start: '00:01', clip_end: '00:03' }],
      ...(['gif', 'thumbnail', 'mosaic', 'clip'] as const).map((t): [string, Record<string, unknown>] => ['/v1/preview', { url: fx.url('/watch/trailer'), preview_type: t }]),
      ['/v1/fingerprint', { url: fx.url('/media/v720.mp4'), hash_size: 8 }],
      ['/v1/waveform', { url: fx.url('/media/v720.mp4') }],
      ['/v1/transcribe', { url: speech.url('jfk.wav'), language: 'en', model_size: 'tiny' }],
      ['/v1/translate', { url: speech.url('jfk.wav'), source_language: 'en', target_language: 'es', model_size: 'tiny' }],
      ['/v1/comments', { url: pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), max_comments: 5 }],
    ];
    const ids = await Promise.all(requests.map(([route, body]) => api.create(route, body)));
    const jobs = await Promise.all(ids.map((id) => api.waitJob(id)));
    for (const job of jobs) assert.equal(job.status, 'completed', `${job.job_type}: ${job.error_message ?? ''}`);
    const files = new Map<string, Buffer>();
    for (const job of jobs) {
      const res = await fetch(job.download_url);
      assert.equal(res.status, 200, `${job.job_type} ${job.job_id}: ${res.status}`);
      files.set(job.job_id, Buffer.from(await res.arrayBuffer()));
    }
    const probe = async (id: string) => {
      const file = path.join(work, `out-${id}`);
      fs.writeFileSync(file, files.get(id)!);
      return ffprobe(file);
    };
    const [hls, wav, gif, thumbnail, mosaic, clip, fingerprint, waveform, transcript, translation, comments] = jobs;
    assert.equal(videoStream(await probe(hls.job_id))?.height, 480);
    assert.equal((await probe(wav.job_id)).format.format_name, 'wav');
    for (const [job, codec] of [[gif, 'gif'], [thumbnail, 'mjpeg'], [mosaic, 'mjpeg'], [clip, 'h264']] as const) {
      assert.equal(videoStream(await probe(job.job_id))?.codec_name, codec, String(job.result_data.preview_type));
    }
    assert.match(String(fingerprint.result_data.perceptual_hash), /^[0-9a-f]{16}$/, JSON.stringify(fingerprint.result_data));
    assert.ok(Array.isArray(JSON.parse(files.get(waveform.job_id)!.toString()).data), 'waveform peaks');
    assert.match(JSON.parse(files.get(transcript.job_id)!.toString()).text, /ask not what your country can do for you/i);
    assert.match(String(translation.result_data.translated_text), /país/);
    assert.equal(JSON.parse(files.get(comments.job_id)!.toString()).comments.length, 5);
    // the synchronous read, on the media worker
    const info = await api.call('GET', `/v1/info?url=${encodeURIComponent(fx.url('/media/v720.mp4'))}`);
    assert.equal(info.status, 200, JSON.stringify(info.body));
    assert.ok(Math.abs(info.body.duration - FIXTURE.durationSeconds) < 0.5);
  });

  it('a media worker container killed mid-job: the job completes once it is back', async () => {
    const id = await api.create('/v1/preview', { url: fx.url(SLOW_SOURCE), preview_type: 'gif' });
    await until('the GIF job processing', async () => ((await api.call('GET', `/v1/jobs/${id}`)).body.status === 'processing' ? true : undefined), 300_000);
    const worker = c.container('worker-media');
    await podman('kill', '--signal', 'KILL', worker);
    figures.killed = worker;
    // its restart policy brings it back; start it ourselves should podman not have yet
    await until('the media worker running again', async () => {
      if ((await podman('inspect', '--format', '{{.State.Running}}', worker)) === 'true') return true;
      await podman('start', worker).catch(() => undefined);
      return undefined;
    }, 120_000);
    const job = await api.waitJob(id, 900_000);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    assert.equal(videoStream(await ffprobe(job.download_url))?.codec_name, 'gif');
  });

  it('keeps the database and the bucket in volumes: the stack stopped and started again still serves the results', async () => {
    const done = await api.waitJob(await api.create('/v1/preview', { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail', timestamp: 1 }));
    assert.equal(done.status, 'completed', done.error_message ?? '');
    const before = Buffer.from(await (await fetch(done.download_url)).arrayBuffer());
    await c.down();
    const since = Date.now();
    await c.up();
    figures.restart_to_ready_s = (await waitReady(base, since, 600_000)).toFixed(1);
    const again = await api.call('GET', `/v1/jobs/${done.job_id}`);
    assert.equal(again.status, 200);
    const after = Buffer.from(await (await fetch(again.body.download_url)).arrayBuffer());
    assert.ok(after.equals(before), 'the thumbnail is the same bytes after the restart');
  });
});
