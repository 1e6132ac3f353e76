// The image as users build it, and compose.yaml (the embedded default) as users start it: jobs
// through the API, then a stop and a start on the same volume. `make test-container` runs it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../lib/config';
import { freePort } from '../helpers/processes';
import { EXPECTED } from '../helpers/speech-fixtures';
import { wordErrorRate } from '../helpers/subtitles';
import { ffprobe } from '../helpers/media';
import { accountClient, apiClient, buildImage, compose, imageSizeMb, podman, podmanUnusable, startContainerOrigin, waitReady, type ContainerOrigin } from './podman';
import { imageFindings } from './image-contents';
import { buildAllImages, IMAGE } from './images';

const execFileP = promisify(execFile);
const LOGS = path.join(projectRoot, '.test-tmp/container');

describe('the container image and compose.yaml (the embedded default)', function () {
  this.timeout(45 * 60_000);
  const figures: Record<string, string> = {};
  let origin: ContainerOrigin;
  let work: string;

  before(async function () {
    const why = await podmanUnusable();
    if (why) throw new Error(`podman cannot run containers on this machine: ${why}`);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-container-'));
    const clip = path.join(work, 'clip.mp4');
    await execFileP('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=6', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=6', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart', clip]);
    origin = await startContainerOrigin(clip);
  });

  after(async () => {
    await origin?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    console.log(`      container figures: ${JSON.stringify(figures)}`);
  });

  it('builds (with the scale-out images beside it), then builds again from its cache', async () => {
    const times = await buildAllImages();
    const cached = await buildImage(IMAGE, path.join(LOGS, 'build-again.log'));
    figures.build_s = String(times[IMAGE]);
    figures.build_cached_s = cached.toFixed(0);
    figures.image_mb = String(await imageSizeMb(IMAGE));
    console.log(`      builds (s, from whatever this machine had cached): ${JSON.stringify(times)}`);
    console.log(`      image ${IMAGE}: ${figures.image_mb} MB; built in ${figures.build_s} s, again from its cache in ${figures.build_cached_s} s`);
  });

  it('runs as a non-root user and carries no secret, CA certificate or test tool', async () => {
    assert.equal(await podman('image', 'inspect', '--format', '{{.Config.User}}', IMAGE), 'mediasvc');
    assert.equal(await podman('run', '--rm', '--entrypoint', 'id', IMAGE, '-u'), '10001');
    const findings = await imageFindings(IMAGE, work);
    assert.deepEqual(findings, [], findings.join('\n'));
  });

  it("carries a JS runtime that yt-dlp can solve YouTube's challenges with, by yt-dlp's own report", async () => {
    // no network: the report reads only what yt-dlp prints as it starts
    const status = await podman('run', '--rm', '--network', 'none', '--entrypoint', 'mediasvc', IMAGE, 'tools', 'yt-dlp', 'status');
    const providers = /JS Challenge Providers: (.*)$/m.exec(status)?.[1];
    assert.ok(providers, status);
    const available = providers.split(', ').filter((p) => !p.includes('(unavailable)'));
    assert.ok(available.length > 0, `every provider unavailable: ${status}`);
    assert.match(status, /^JS runtime in use: deno /m, status);
  });

  describe('compose.yaml', () => {
    const project = `mediasvc-ct-${crypto.randomBytes(3).toString('hex')}`;
    let c: ReturnType<typeof compose>;
    let base = '';
    let env: NodeJS.ProcessEnv;
    let api: ReturnType<typeof apiClient>;
    const jobs: Record<string, { id: string; sha256: string }> = {};

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      env = { MEDIASVC_PORT: String(port), TEMPORAL_UI_HOST_PORT: String(await freePort()), PUBLIC_BASE_URL: base };
      // the sources are on this machine, a private address the service refuses by default
      c = compose(project, ['compose.yaml', 'test/container/compose.private-sources.yaml'], path.join(LOGS, `${project}.log`), env);
      const since = Date.now();
      await c.up();
      figures.up_to_ready_s = (await waitReady(base, since)).toFixed(1);
      console.log(`      compose up to /readyz 200: ${figures.up_to_ready_s} s`);
      api = await accountClient(c.container('mediasvc'), base, 'container');
    });

    after(async () => {
      if (c) await c.down(true).catch((err) => console.log(`      compose down: ${(err as Error).message}`));
    });

    const fileHash = async (url: string): Promise<string> => {
      const res = await fetch(url);
      assert.equal(res.status, 200, `GET ${url}: ${res.status}`);
      return crypto.createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex');
    };

    it('serves the Temporal Web UI on its port', async () => {
      const res = await fetch(`http://127.0.0.1:${env.TEMPORAL_UI_HOST_PORT}/`);
      assert.equal(res.status, 200);
    });

    it('makes a thumbnail of a page (yt-dlp), a download (ffmpeg) and a transcription (faster-whisper)', async () => {
      const ids = {
        thumbnail: await api.create('/v1/preview', { url: origin.url('watch.html'), preview_type: 'thumbnail', width: 320 }),
        download: await api.create('/v1/download', { url: origin.url('clip.mp4'), format: 'mkv' }),
        transcribe: await api.create('/v1/transcribe', { url: origin.url('jfk.wav'), model_size: 'base' }),
      };
      for (const [kind, id] of Object.entries(ids)) {
        const job = await api.waitJob(id);
        assert.equal(job.status, 'completed', `${kind}: ${job.error_message}`);
        jobs[kind] = { id, sha256: await fileHash(job.download_url) };
        const file = path.join(work, `${kind}.out`);
        fs.writeFileSync(file, Buffer.from(await (await fetch(job.download_url)).arrayBuffer()));
        if (kind === 'transcribe') {
          const t = JSON.parse(fs.readFileSync(file, 'utf8'));
          assert.equal(t.language, 'en');
          assert.ok(wordErrorRate(EXPECTED['jfk.wav']!.text!, t.text) <= 0.1, t.text);
        } else {
          const probe = await ffprobe(file);
          const video = probe.streams.find((s) => s.codec_type === 'video');
          assert.ok(video, `${kind}: no video stream`);
          if (kind === 'thumbnail') assert.equal(video.width, 320);
          else assert.ok(Math.abs(Number(probe.format.duration) - 6) < 0.5, `duration ${probe.format.duration}`);
        }
      }
    });

    it('keeps the jobs and their files through a stop and a start on the same volume', async () => {
      assert.equal(Object.keys(jobs).length, 3, 'the jobs of the test before');
      await c.down();
      const since = Date.now();
      await c.up();
      figures.restart_to_ready_s = (await waitReady(base, since)).toFixed(1);
      for (const [kind, { id, sha256 }] of Object.entries(jobs)) {
        const { status, body } = await api.call('GET', `/v1/jobs/${id}`);
        assert.equal(status, 200, `${kind}: ${JSON.stringify(body)}`);
        assert.equal(body.status, 'completed');
        assert.equal(await fileHash(body.download_url), sha256, `${kind}'s file changed`);
      }
      // and the restarted stack still runs jobs
      const again = await api.waitJob(await api.create('/v1/preview', { url: origin.url('clip.mp4'), preview_type: 'thumbnail', width: 160 }));
      assert.equal(again.status, 'completed', again.error_message ?? '');
    });

    it('stops gracefully on SIGTERM', async () => {
      const ctr = c.container('mediasvc');
      const started = Date.now();
      await podman('stop', '--time', '60', ctr);
      figures.stop_s = ((Date.now() - started) / 1000).toFixed(1);
      // 143 is 128 + SIGTERM: killed without stopping; a graceful stop exits 0
      assert.equal(await podman('inspect', '--format', '{{.State.ExitCode}}', ctr), '0', `its log ends: ${(await podman('logs', '--tail', '20', ctr)).slice(-2000)}`);
    });
  });
});
