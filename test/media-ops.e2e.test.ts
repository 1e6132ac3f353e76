import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { FIXTURE, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { originMedia, startMediaOrigin, type MediaOrigin, type OriginMode, type OriginType } from './helpers/media-origin';
import { EXPECTED } from './helpers/speech-fixtures';
import { wordErrorRate } from './helpers/subtitles';
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
    s = await startServeStack({ name: 'ops-e2e', plan: 'business' });
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
    assert.equal(job.failure_kind, 'rejected');
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

  describe('every kind of origin: Range honoured, ignored, lied about or chunked, index first or last, a wrong content type', function () {
    let origin: MediaOrigin;

    before(async function () {
      this.timeout(5 * 60_000);
      origin = await startMediaOrigin(await originMedia());
    });

    after(async () => origin?.close());

    type Check = (job: JobBody) => Promise<void>;
    const VIDEO_OPS: Record<string, { path: string; body: Record<string, unknown>; check: Check }> = {
      download: {
        path: '/v1/download',
        body: { format: 'mp4', clip_start: '1', clip_end: '3.5', processing: ['normalize'] },
        check: async (job) => {
          const probe = await ffprobe(await fetchFile(job, `${job.job_id}.mp4`));
          assert.ok(Math.abs(Number(probe.format.duration) - 2.5) <= 0.15, `duration ${probe.format.duration}`);
          assert.equal(videoStream(probe)?.codec_name, 'h264');
          assert.equal(audioStream(probe)?.codec_name, 'aac');
          assert.equal(typeof job.result_data!.loudness?.output_i, 'number');
        },
      },
      gif: {
        path: '/v1/preview',
        body: { preview_type: 'gif', start: '2', duration: 2, width: 320, fps: 10 },
        check: async (job) => {
          const v = videoStream(await ffprobe(await fetchFile(job, `${job.job_id}.gif`)))!;
          assert.deepEqual([v.codec_name, v.width, v.height], ['gif', 320, 240]);
          assert.equal(job.result_data!.fps, 10);
          assert.ok(Math.abs(job.result_data!.duration - 2) <= 0.15, String(job.result_data!.duration));
        },
      },
      thumbnail: {
        path: '/v1/preview',
        body: { preview_type: 'thumbnail', timestamp: '7', width: 320 },
        check: async (job) => {
          const v = videoStream(await ffprobe(await fetchFile(job, `${job.job_id}.jpg`)))!;
          assert.deepEqual([v.codec_name, v.width, v.height], ['mjpeg', 320, 240]);
        },
      },
      mosaic: {
        path: '/v1/preview',
        body: { preview_type: 'mosaic', columns: 3, rows: 2, width: 480 },
        check: async (job) => {
          const v = videoStream(await ffprobe(await fetchFile(job, `${job.job_id}.jpg`)))!;
          assert.deepEqual([v.codec_name, v.width, v.height], ['mjpeg', 480, 240]);
        },
      },
      clip: {
        path: '/v1/preview',
        body: { preview_type: 'clip', start: '4', duration: 3, width: 320 },
        check: async (job) => {
          const probe = await ffprobe(await fetchFile(job, `${job.job_id}.mp4`));
          assert.equal(videoStream(probe)?.codec_name, 'h264');
          assert.equal(audioStream(probe)?.codec_name, 'aac');
          assert.ok(Math.abs(Number(probe.format.duration) - 3) <= 0.15, `duration ${probe.format.duration}`);
        },
      },
      fingerprint: {
        path: '/v1/fingerprint',
        body: { timestamp: '5', hash_size: 8 },
        // the same frame whichever way the source was read: every origin gives the same three hashes
        check: async (job) => {
          const r = job.result_data!;
          assert.equal(r.frame_timestamp, '00:00:05.000');
          fingerprints.add(`${r.average_hash} ${r.perceptual_hash} ${r.difference_hash}`);
        },
      },
    };
    const SPEECH_OPS: typeof VIDEO_OPS = {
      transcribe: {
        path: '/v1/transcribe',
        body: { model_size: 'tiny', language: 'en' },
        check: async (job) => {
          const text = ((await (await fetch(job.download_url!)).json()) as { text: string }).text;
          assert.ok(wordErrorRate(EXPECTED['jfk.wav']!.text!, text) <= 0.3, text);
        },
      },
      translate: {
        path: '/v1/translate',
        body: { source_language: 'en', target_language: 'es', model_size: 'tiny' },
        check: async (job) => assert.match(job.result_data!.translated_text, /país/),
      },
    };
    const fingerprints = new Set<string>();

    /** Waits for many jobs at once with one list read per round (one poll per job would spend the key's minute). */
    async function waitJobs(ids: string[]): Promise<Map<string, JobBody>> {
      const done = new Map<string, JobBody>();
      const deadline = Date.now() + 15 * 60_000;
      while (done.size < ids.length) {
        assert.ok(Date.now() < deadline, `${ids.length - done.size} of ${ids.length} jobs still running after 15 minutes`);
        await new Promise((r) => setTimeout(r, 2000));
        for (let cursor: string | null = null, first = true; first || cursor; first = false) {
          const page: { status: number; body: { items: JobBody[]; next_cursor: string | null; has_more: boolean } } = await api('GET', `/v1/jobs?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          assert.equal(page.status, 200, JSON.stringify(page.body));
          for (const j of page.body.items) if (ids.includes(j.job_id) && (j.status === 'completed' || j.status === 'failed')) done.set(j.job_id, j);
          cursor = page.body.has_more ? page.body.next_cursor : null;
        }
      }
      // the list carries the summary: each job read once, whole
      for (const id of ids) done.set(id, (await api('GET', `/v1/jobs/${id}`)).body as JobBody);
      return done;
    }

    it('every operation completes with correct output from every origin and layout', async function () {
      this.timeout(20 * 60_000);
      const combos: Array<{ mode: OriginMode; file: string; type: OriginType; ops: typeof VIDEO_OPS }> = [];
      const all = { ...VIDEO_OPS, ...SPEECH_OPS };
      for (const mode of ['range', 'norange', 'chunked'] as const) for (const file of ['speech-fast.mp4', 'speech-tail.mp4']) combos.push({ mode, file, type: 'right', ops: all });
      // an origin that claims ranges but ignores them; one that serves only a first small range; a wrong content type
      combos.push({ mode: 'liar', file: 'speech-tail.mp4', type: 'right', ops: VIDEO_OPS });
      combos.push({ mode: 'firstrange', file: 'speech-tail.mp4', type: 'right', ops: VIDEO_OPS });
      combos.push({ mode: 'range', file: 'speech-tail.mp4', type: 'octet', ops: VIDEO_OPS });
      combos.push({ mode: 'chunked', file: 'speech-tail.mp4', type: 'octet', ops: all });
      const runs: Array<{ name: string; id: string; check: Check }> = [];
      for (const c of combos) {
        for (const [op, spec] of Object.entries(c.ops)) {
          const res = await api('POST', spec.path, { url: origin.url(c.mode, c.file, c.type), ...spec.body });
          assert.equal(res.status, 202, `${op} ${c.mode} ${c.file} ${c.type}: ${JSON.stringify(res.body)}`);
          runs.push({ name: `${op} from ${c.mode}/${c.type}/${c.file}`, id: res.body.job_id as string, check: spec.check });
        }
      }
      const jobs = await waitJobs(runs.map((r) => r.id));
      const failures: string[] = [];
      for (const r of runs) {
        const job = jobs.get(r.id)!;
        try {
          assert.equal(job.status, 'completed', job.error_message ?? '');
          await r.check(job);
        } catch (err) {
          failures.push(`${r.name}: ${(err as Error).message}`);
        }
      }
      console.log(`      ${runs.length} jobs over ${combos.length} origin variants: ${runs.length - failures.length} correct; requests by mode ${JSON.stringify(Object.fromEntries(origin.requests))}`);
      assert.deepEqual(failures, []);
      assert.equal(fingerprints.size, 1, `one frame, one fingerprint: ${[...fingerprints].join(' / ')}`);
    });

    it('a source cut short before its index fails in words about the source, refunded once, whether or not the origin serves ranges', async () => {
      const before = await credits();
      const ids: string[] = [];
      for (const mode of ['range', 'norange'] as const) {
        for (const body of [{ preview_type: 'thumbnail' }, { preview_type: 'mosaic' }]) {
          const res = await api('POST', '/v1/preview', { url: origin.url(mode, 'speech-cut.mp4'), ...body });
          assert.equal(res.status, 202, JSON.stringify(res.body));
          ids.push(res.body.job_id as string);
        }
        const fp = await api('POST', '/v1/fingerprint', { url: origin.url(mode, 'speech-cut.mp4') });
        assert.equal(fp.status, 202, JSON.stringify(fp.body));
        ids.push(fp.body.job_id as string);
      }
      const jobs = await waitJobs(ids);
      for (const job of jobs.values()) {
        assert.equal(job.status, 'failed', `${job.job_id} ${job.status}`);
        assert.equal(job.error_message, 'The source could not be read: the source ended before its index could be read (the file is cut short, or its index is missing)');
        assert.doesNotMatch(job.error_message!, /ffmpeg|ffprobe|\/tmp|work\//i);
      }
      assert.equal(await credits(), before, 'every failed job refunded, exactly');
    });
  });
});
