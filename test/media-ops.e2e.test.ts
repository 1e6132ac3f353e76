import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { FIXTURE, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { audioStream, ffprobe, videoStream } from './helpers/media';
import { startServeStack, type JobBody, type ServeStack } from './helpers/serve-stack';

const run = promisify(execFile);


describe('media operations end to end: clip/processing downloads, previews and fingerprints through serve', function () {
  let fx: FixturePlatform;
  let s: ServeStack;
  let dataDir: string;

  const api = (method: string, p: string, body?: unknown) => s.api(method, p, body);
  const credits = () => s.credits();

  async function create(p: string, body: Record<string, unknown>): Promise<string> {
    const res = await api('POST', p, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.job_id as string;
  }

  const waitJob = (jobId: string) => s.waitJob(jobId);

  async function fetchFile(job: JobBody, name: string): Promise<string> {
    assert.equal(job.status, 'completed', job.error_message ?? '');
    const res = await fetch(job.download_url!);
    assert.equal(res.status, 200);
    const file = path.join(dataDir, name);
    fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  before(async function () {
    fx = await startFixturePlatform();
    s = await startServeStack({ name: 'ops-e2e', plan: 'pro' });
    dataDir = s.dataDir;
  });

  after(async () => {
    await s?.stop();
    await fx?.close();
  });

  it('a clipped, normalized download costs 2 credits and delivers the cut at -16 LUFS with loudness in result_data', async () => {
    const before = await credits();
    const id = await create('/v1/download', { url: fx.url('/media/v720.mp4'), format: 'mp4', clip_start: '00:00.5', clip_end: '2.7', processing: ['normalize'] });
    const job = await waitJob(id);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    assert.equal(job.credits_charged, 2);
    assert.equal(await credits(), before - 2);
    assert.equal(job.progress, 100);
    const file = await fetchFile(job, 'clip.mp4');
    const probe = await ffprobe(file);
    assert.ok(Math.abs(Number(probe.format.duration) - 2.2) <= 0.1, probe.format.duration);
    assert.equal(videoStream(probe)?.codec_name, 'h264');
    assert.equal(audioStream(probe)?.codec_name, 'aac');
    const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostats', '-i', file, '-af', 'ebur128', '-f', 'null', '-']);
    const integrated = Number(/I:\s+(-?[\d.]+) LUFS/.exec(stderr.slice(stderr.lastIndexOf('Summary:')))?.[1]);
    assert.ok(Math.abs(integrated - -16) <= 1, String(integrated));
    assert.ok(Math.abs(job.result_data!.loudness.output_i - integrated) <= 0.3);
    assert.equal(job.result_data!.format, 'mp4');
    assert.equal(job.result_data!.filesize, fs.statSync(file).size);
  });

  it('a clip past the end of the source fails the job with a readable message and refunds it', async () => {
    const before = await credits();
    const job = await waitJob(await create('/v1/download', { url: fx.url('/media/v480.mp4'), clip_start: '00:01', clip_end: '00:09', processing: ['denoise'] }));
    assert.equal(job.status, 'failed');
    assert.match(job.error_message!, /^clip_end \(9 s\) is past the end of the source, which is 4(\.\d+)? s long$/);
    assert.equal(await credits(), before);
  });

  it('renders all four preview types with their defaults, measured in result_data', async () => {
    const expect = { gif: 'gif', thumbnail: 'mjpeg', mosaic: 'mjpeg', clip: 'h264' } as const;
    const ids = await Promise.all(Object.keys(expect).map((t) => create('/v1/preview', { url: fx.url('/watch/trailer'), preview_type: t })));
    const jobs = await Promise.all(ids.map(waitJob));
    for (const [i, [type, codec]] of Object.entries(expect).entries()) {
      const job = jobs[i]!;
      assert.equal(job.credits_charged, 1);
      const file = await fetchFile(job, `preview-${type}`);
      const probe = await ffprobe(file);
      const v = videoStream(probe)!;
      assert.equal(v.codec_name, codec, type);
      assert.equal(v.width, 480, type);
      assert.ok(Math.abs(v.height! - 270) <= 2, `${type} ${v.height}`);
      const r = job.result_data!;
      assert.deepEqual([r.preview_type, r.width, r.height, r.filesize], [type, v.width, v.height, fs.statSync(file).size]);
      if (type === 'gif') assert.equal(r.fps, 10);
      if (type === 'clip') {
        assert.equal(audioStream(probe)?.codec_name, 'aac');
        assert.ok(Math.abs(r.duration - FIXTURE.durationSeconds) <= 0.1, String(r.duration));
      }
    }
  });

  it('fingerprints a frame: three hashes of hash_size² bits, the frame time and the title; the same frame twice is identical', async () => {
    const [a, b] = await Promise.all([0, 1].map(async () => waitJob(await create('/v1/fingerprint', { url: fx.url('/watch/trailer'), hash_size: 8 }))));
    for (const job of [a!, b!]) {
      assert.equal(job.status, 'completed', job.error_message ?? '');
      assert.equal(job.credits_charged, 1);
      const r = job.result_data!;
      for (const k of ['average_hash', 'perceptual_hash', 'difference_hash']) assert.match(r[k], /^[0-9a-f]{16}$/);
      assert.equal(r.hash_size, 8);
      assert.equal(r.frame_timestamp, '00:00:01.000');
      assert.equal(r.title, FIXTURE.page.title);
      const json = JSON.parse(fs.readFileSync(await fetchFile(job, `fp-${job.job_id}.json`), 'utf8'));
      assert.deepEqual(json, r);
    }
    assert.deepEqual(
      [a!.result_data!.average_hash, a!.result_data!.perceptual_hash, a!.result_data!.difference_hash],
      [b!.result_data!.average_hash, b!.result_data!.perceptual_hash, b!.result_data!.difference_hash],
    );
  });
});
