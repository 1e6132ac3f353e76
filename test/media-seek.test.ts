// Jobs that read one frame or a short window seek in the source URL instead of downloading it:
// bytes fetched do not grow with the source's length, every such read goes through the egress
// proxy, and a page's source is extracted by yt-dlp once per job.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { createFingerprintActivities } from '../operations/fingerprint/activities';
import { createPreviewActivities } from '../operations/preview/activities';
import { createSourceActivities, type ResolvedSource, type ResolveSourceInput, type SourceDeps } from '../activities/source/activities';
import { startEgressProxy, type EgressProxy } from '../engines/egress/egress-proxy';
import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import { LocalStorage, Storage } from '../engines/storage';
import { createYtDlpEngine } from '../engines/ytdlp/ytdlp.engine';
import { loadConfig } from '../lib/config';
import { USER_FAILURE_TYPES } from '../lib/job-failure';
import type { JobOutput } from '../lib/job-reports';
import type { PreviewParams } from '../operations/preview/spec';
import { startOrigin, type Origin } from './bench/rows/media.rows';
import { activityEnv, expectNonRetryable } from './helpers/activity-env';
import { testEgress } from './helpers/egress';
import { startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { ffprobe, probeFields, videoStream } from './helpers/media';
import { originMedia, startMediaOrigin, type MediaOrigin } from './helpers/media-origin';

const run = promisify(execFile);

/** A small-picture source of `seconds` (2 s GOP, faststart), cached across runs: length is what varies. */
async function source(dir: string, seconds: number): Promise<string> {
  const file = path.join(dir, `seek-${seconds}s.mp4`);
  if (fs.existsSync(file)) return file;
  const tmp = `${file}.${process.pid}.tmp.mp4`;
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=320x240:rate=25:duration=${seconds}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '50', '-b:v', '600k', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', tmp]);
  fs.renameSync(tmp, file);
  return file;
}

/** A 4×4 mosaic of the moving test pattern: no tile black, and no two the same frame. */
async function assertSixteenFrames(sheet: string, label: string): Promise<void> {
  const { data, info } = await sharp(sheet).greyscale().resize(64, 36, { fit: 'fill' }).raw().toBuffer({ resolveWithObject: true });
  const tiles = Array.from({ length: 16 }, (_, i) => {
    const [c, r] = [i % 4, Math.floor(i / 4)];
    const px: number[] = [];
    for (let y = r * 9; y < (r + 1) * 9; y++) for (let x = c * 16; x < (c + 1) * 16; x++) px.push(data[y * info.width + x]!);
    return px;
  });
  for (const [i, px] of tiles.entries()) assert.ok(px.reduce((a, b) => a + b, 0) / px.length > 40, `${label}: tile ${i} is black`);
  assert.equal(new Set(tiles.map((px) => px.join(','))).size, 16, `${label}: every tile shows a different frame`);
}

describe('seek reads: one-frame and short-window jobs fetch only what they read, through the egress proxy', function () {
  this.timeout(10 * 60_000);
  const config = loadConfig({ ALLOW_PRIVATE_NETWORK: '1' });
  const ytdlp = createYtDlpEngine({ binary: config.ytdlpPath, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath });
  const ffmpeg = createFfmpegEngine(config);
  const limits: SourceDeps['config'] = { allowPrivateNetwork: true, maxSourceDurationSeconds: 4 * 3600, maxSourceBytes: 4 * 1024 ** 3, allowLive: false };
  const cache = path.join(os.tmpdir(), 'mediasvc-seek-sources');
  let egress: EgressProxy;
  let origin: Origin;
  let fx: FixturePlatform;
  let dataDir: string;
  let storage: Storage;
  let sizes: Record<string, number>;

  before(async () => {
    fs.mkdirSync(cache, { recursive: true });
    sizes = {};
    for (const s of [10, 120, 600]) sizes[`seek-${s}s.mp4`] = fs.statSync(await source(cache, s)).size;
    egress = await testEgress();
    // a 100 Mbit/s link: bytes counted are bytes the tools asked for, not what loopback buffers absorb
    origin = await startOrigin(cache, { bytesPerSecond: 12.5e6 });
    fx = await startFixturePlatform();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-seek-'));
    storage = new LocalStorage(loadConfig({ DATA_DIR: dataDir }));
  });
  after(async () => {
    await origin?.close();
    await fx?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The ffmpeg engine, counting its ffprobe runs. */
  const countingProbes = () => {
    const counting = {
      probes: 0,
      ffmpeg: {
        ...ffmpeg,
        probe: (...args: Parameters<typeof ffmpeg.probe>) => {
          counting.probes++;
          return ffmpeg.probe(...args);
        },
      },
    };
    return counting;
  };
  const sourceActs = () => createSourceActivities({ ytdlp, ffmpeg, storage, egress, config: limits });
  const resolve = (url: string, reads: ResolveSourceInput['reads'], jobId = crypto.randomUUID()) =>
    activityEnv().run(sourceActs().resolveSource, { jobId, url, quality: '720p' as const, format: null, reads, progressRange: [0, 40] as [number, number] }) as Promise<ResolvedSource>;
  const params = (over: Partial<PreviewParams>): PreviewParams => ({ url: '', preview_type: 'thumbnail', timestamp: null, start: null, duration: null, width: 320, columns: null, rows: null, fps: null, webhook_url: null, ...over });

  /** Bytes the origin sent for a whole job: the source step, then the preview or fingerprint. */
  async function bytesFor(name: string, kind: 'thumbnail' | 'fingerprint' | 'gif'): Promise<{ bytes: number; out: JobOutput; jobId: string }> {
    origin.bytes = 0;
    const jobId = crypto.randomUUID();
    const src = await resolve(origin.url(name), 'video', jobId);
    assert.equal(src.sourceFile, null, 'a plain seekable file is not downloaded');
    assert.ok(src.media, 'the source is read in place');
    const out =
      kind === 'fingerprint'
        ? ((await activityEnv().run(createFingerprintActivities({ ffmpeg, storage, egress, limits }).fingerprintFrame, { jobId, sourceFile: null, media: src.media, title: src.title, timestamp: null, hashSize: 16 as const, progressRange: [40, 99] as [number, number] })) as JobOutput)
        : ((await activityEnv().run(createPreviewActivities({ ffmpeg, storage, egress, limits }).makePreview, {
            jobId,
            sourceFile: null,
            media: src.media,
            params: kind === 'gif' ? params({ preview_type: 'gif', start: '00:00:05', duration: 3, fps: 10 }) : params({}),
            progressRange: [40, 99] as [number, number],
          })) as JobOutput);
    return { bytes: origin.bytes, out, jobId };
  }

  // The GIF's 3 s window lies past a 10 s source's end of file reads: it compares 120 s with 600 s.
  for (const [kind, shortName] of [['thumbnail', 'seek-10s.mp4'], ['fingerprint', 'seek-10s.mp4'], ['gif', 'seek-120s.mp4']] as const) {
    it(`${kind}: bytes fetched for a 600 s source are no more than for a ${shortName.slice(5, -4)} one (plus slack), a fraction of the file`, async () => {
      const short = await bytesFor(shortName, kind);
      const long = await bytesFor('seek-600s.mp4', kind);
      console.log(`      ${kind}: ${short.bytes} B fetched of a ${sizes[shortName]} B source, ${long.bytes} B of a ${sizes['seek-600s.mp4']} B 600 s source`);
      // The index (moov) grows with length, by about 10 kB a minute here; and ffmpeg's open-ended
      // range read runs ahead of the decoder while it works (rate × processing time): the slack covers both.
      assert.ok(long.bytes <= short.bytes * 1.5 + 1024 * 1024, `${long.bytes} B for 600 s vs ${short.bytes} B for 10 s`);
      assert.ok(long.bytes < sizes['seek-600s.mp4']! / 3, `${long.bytes} B of a ${sizes['seek-600s.mp4']} B file`);
      assert.ok(!fs.existsSync(path.join(storage.workDirOf(long.jobId), 'download')), 'nothing was downloaded');
      if (kind === 'thumbnail') {
        const v = videoStream(await ffprobe(storage.outputPath(long.out.outputFile)))!;
        assert.equal(v.width, 320);
      }
      if (kind === 'gif') {
        // frames counted from the output's packets, not by decoding it again: 3 s at 10 fps
        assert.equal(long.out.resultData.fps, 10);
        assert.ok(Math.abs(Number(long.out.resultData.duration) - 3) < 0.2);
      }
    });
  }

  it('a mosaic of a small source read in place decodes it once: the file\'s bytes, not a stream per tile, and every tile a frame of its own', async () => {
    const mosaic = async (name: string) => {
      const jobId = crypto.randomUUID();
      const src = await resolve(origin.url(name), 'video', jobId);
      origin.bytes = 0;
      const out = (await activityEnv().run(createPreviewActivities({ ffmpeg, storage, egress, limits }).makePreview, { jobId, sourceFile: null, media: src.media, params: params({ preview_type: 'mosaic', columns: 4, rows: 4, width: 640 }), progressRange: [40, 99] as [number, number] })) as JobOutput;
      return { bytes: origin.bytes, file: storage.outputPath(out.outputFile), jobId };
    };
    const short = await mosaic('seek-10s.mp4');
    const long = await mosaic('seek-600s.mp4');
    console.log(`      mosaic 4×4: ${short.bytes} B fetched of a ${sizes['seek-10s.mp4']} B 10 s source, ${long.bytes} B of a ${sizes['seek-600s.mp4']} B 600 s source`);
    // 16 seek reads fetched more than the whole 600 s file (58 MB of 45 MB), each streaming ahead until the last tile
    for (const [got, name] of [[short.bytes, 'seek-10s.mp4'], [long.bytes, 'seek-600s.mp4']] as const) assert.ok(got <= sizes[name]! * 1.05, `one read of ${name}: ${got} B of ${sizes[name]} B`);
    for (const { file, jobId } of [short, long]) {
      assert.ok(!fs.existsSync(path.join(storage.workDirOf(jobId), 'download')), 'nothing was downloaded');
      await assertSixteenFrames(file, path.basename(file));
    }
  });

  it('a mosaic of a long 720p source read in place seeks to each tile, four seeks to an ffmpeg run; from an origin that ignores ranges, the same from the downloaded file', async () => {
    // 120 s of 720p: more pixels than one decode should take, so a seek per tile
    const name = 'seek-720p-120s.mp4';
    const file = path.join(cache, name);
    if (!fs.existsSync(file)) {
      await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=2:duration=120', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '4', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', `${file}.tmp.mp4`]);
      fs.renameSync(`${file}.tmp.mp4`, file);
    }
    const mo = await startMediaOrigin(cache);
    try {
      for (const mode of ['range', 'norange'] as const) {
        let runs = 0;
        const counting = { ...ffmpeg, run: (...args: Parameters<typeof ffmpeg.run>) => ((runs += 1), ffmpeg.run(...args)) };
        const jobId = crypto.randomUUID();
        const src = await resolve(mo.url(mode, name), 'video', jobId);
        const ref = { sourceFile: src.sourceFile, media: src.media, sourceProbe: src.sourceProbe };
        assert.equal(!!src.media, mode === 'range', `${mode}: read in place only where ranges are honoured`);
        const before = mo.requests.get(mode) ?? 0;
        const out = (await activityEnv().run(createPreviewActivities({ ffmpeg: counting, storage, egress, limits }).makePreview, { jobId, ...ref, params: params({ preview_type: 'mosaic', columns: 4, rows: 4, width: 640 }), progressRange: [40, 99] as [number, number] })) as JobOutput;
        const requests = (mo.requests.get(mode) ?? 0) - before;
        assert.equal(runs, 4, `${mode}: sixteen tiles in four ffmpeg runs`);
        if (mode === 'range') {
          assert.ok(requests >= 16, `a request per seek at least: ${requests}`);
          assert.ok(!fs.existsSync(path.join(storage.workDirOf(jobId), 'download')), 'nothing was downloaded');
        } else {
          assert.equal(requests, 0, 'the tiles were taken from the downloaded file');
        }
        assert.ok(!fs.existsSync(path.join(storage.workDirOf(jobId), 'mosaic-tiles')), 'the tiles are not left behind');
        const sheet = storage.outputPath(out.outputFile);
        const v = videoStream(await ffprobe(sheet))!;
        assert.deepEqual([v.codec_name, v.width, v.height, out.resultData.width, out.resultData.height], ['mjpeg', 640, 360, 640, 360], mode);
        await assertSixteenFrames(sheet, mode);
      }
    } finally {
      await mo.close();
    }
  });

  it('a seek read goes through the egress proxy: a private origin is refused there, and it serves nothing', async () => {
    const strict = await startEgressProxy({ allowPrivate: false });
    try {
      const src = await resolve(origin.url('seek-10s.mp4'), 'video');
      origin.bytes = 0;
      const preview = createPreviewActivities({ ffmpeg, storage, egress: strict, limits: { ...limits, allowPrivateNetwork: false } }).makePreview;
      // the media as resolved, minus the probe, so the preview's own reads meet the proxy
      const input = { jobId: crypto.randomUUID(), sourceFile: null, media: { ...src.media!, probe: null }, params: params({}), progressRange: [40, 99] as [number, number] };
      await expectNonRetryable(activityEnv().run(preview, input) as Promise<unknown>, USER_FAILURE_TYPES.rejected, /private or reserved address \(127\.0\.0\.1\)/);
      assert.equal(origin.bytes, 0);
    } finally {
      await strict.close();
    }
  });

  it('a page is extracted once: a whole download reuses the probe (one page request), a frame job seeks in the page\'s file', async () => {
    const page = '/watch/trailer';
    const hits = () => fx.hits.get(page) ?? 0;
    let before = hits();
    const frame = await resolve(fx.url(page), 'video');
    const probeOnly = hits() - before;
    before = hits();
    const jobId = crypto.randomUUID();
    const whole = await resolve(fx.url(page), 'whole', jobId);
    // a HEAD (is it a plain file?) and yt-dlp's one extraction, with or without the download after it
    assert.equal(hits() - before, probeOnly, 'the download reused the probe\'s info JSON instead of reading the page again');
    assert.ok(whole.sourceFile && fs.existsSync(path.join(storage.workDirOf(jobId), whole.sourceFile)), 'the rendition was downloaded');
    assert.equal(whole.media, null);
    assert.equal(whole.title, 'Fixture Trailer');
    assert.equal(frame.sourceFile, null);
    assert.match(frame.media!.url, /^http:\/\/127\.0\.0\.1:\d+\/media\/v\d+\.mp4/);
  });

  describe('origins that defeat seeking: the source is downloaded instead, and the job still completes', () => {
    let mo: MediaOrigin;
    before(async () => {
      mo = await startMediaOrigin(await originMedia());
    });
    after(async () => mo?.close());

    it('resolveSource reads in place only where a small range request really comes back 206 (not on Accept-Ranges alone)', async () => {
      const got: Record<string, string> = {};
      for (const mode of ['range', 'norange', 'liar', 'chunked'] as const) {
        for (const file of ['speech-fast.mp4', 'speech-tail.mp4']) {
          const src = await resolve(mo.url(mode, file), 'video');
          got[`${mode} ${file}`] = src.media ? 'seek' : src.sourceFile ? 'download' : 'none';
          assert.ok(Math.abs(src.duration! - 11) < 0.2, `${mode} ${file}: duration ${src.duration}`);
        }
      }
      assert.deepEqual(got, {
        'range speech-fast.mp4': 'seek',
        'range speech-tail.mp4': 'seek',
        'norange speech-fast.mp4': 'download',
        'norange speech-tail.mp4': 'download',
        'liar speech-fast.mp4': 'download',
        'liar speech-tail.mp4': 'download',
        'chunked speech-fast.mp4': 'download',
        'chunked speech-tail.mp4': 'download',
      });
    });

    it('a plain MP4 read in place is measured from its index, fetched by range requests, with no ffprobe: what ffprobe says of the URL', async () => {
      const counting = countingProbes();
      const resolveCounting = (url: string) =>
        activityEnv().run(createSourceActivities({ ytdlp, ffmpeg: counting.ffmpeg, storage, egress, config: limits }).resolveSource, { jobId: crypto.randomUUID(), url, quality: '720p' as const, format: null, reads: 'av' as const, progressRange: [0, 40] as [number, number] }) as Promise<ResolvedSource>;
      // the index before the media: one read of the file's head; after it: the head, then the index past the media
      for (const [file, indexReads] of [['speech-fast.mp4', 1], ['speech-tail.mp4', 2]] as const) {
        const before = mo.requests.get('range') ?? 0;
        counting.probes = 0;
        const src = await resolveCounting(mo.url('range', file));
        const requests = (mo.requests.get('range') ?? 0) - before;
        assert.equal(counting.probes, 0, `${file}: no ffprobe ran`);
        assert.ok(src.media?.probe, `${file}: read in place, measured`);
        assert.deepEqual(probeFields(src.media.probe), probeFields(await ffprobe(mo.url('range', file))), file);
        assert.equal(requests, 2 + indexReads, `${file}: the HEAD, the two-byte range check and ${indexReads} index read(s); got ${requests}`);
      }
      // an origin that honours the range check but no other range: its index is measured by ffprobe, as before
      counting.probes = 0;
      const first = await resolveCounting(mo.url('firstrange', 'speech-fast.mp4'));
      assert.equal(counting.probes, 1, 'ffprobe measured what the index reader could not fetch');
      assert.deepEqual(probeFields(first.media!.probe!), probeFields(await ffprobe(mo.url('range', 'speech-fast.mp4'))));
      // another container (WebM) on an origin that serves ranges: read in place, measured by ffprobe
      counting.probes = 0;
      const webm = await resolveCounting(fx.url('/media/clip.webm'));
      assert.equal(counting.probes, 1, 'ffprobe measured the WebM');
      assert.ok(webm.media, 'the WebM is read in place');
      assert.deepEqual(probeFields(webm.media.probe!), probeFields(await ffprobe(fx.url('/media/clip.webm'))));
    });

    it("a downloaded source's ffprobe goes on with it: the fingerprint and preview steps on that file run no second ffprobe", async () => {
      const counting = countingProbes();
      const jobId = crypto.randomUUID();
      const src = (await activityEnv().run(createSourceActivities({ ytdlp, ffmpeg: counting.ffmpeg, storage, egress, config: limits }).resolveSource, {
        jobId,
        url: mo.url('norange', 'speech-tail.mp4'),
        quality: '720p' as const,
        format: null,
        reads: 'video' as const,
        progressRange: [0, 40] as [number, number],
      })) as ResolvedSource;
      assert.ok(src.sourceFile && !src.media, 'an origin that ignores ranges: the source is downloaded');
      assert.equal(counting.probes, 1, 'the fetch step probed the downloaded file once');
      assert.ok(src.sourceProbe?.streams.some((x) => x.codec_type === 'video'), 'and hands that probe on');
      const ref = { sourceFile: src.sourceFile, media: null, sourceProbe: src.sourceProbe };
      const fp = (await activityEnv().run(createFingerprintActivities({ ffmpeg: counting.ffmpeg, storage, egress, limits }).fingerprintFrame, { jobId, ...ref, title: 't', timestamp: 5, hashSize: 8 as const, progressRange: [40, 99] as [number, number] })) as JobOutput;
      const thumb = (await activityEnv().run(createPreviewActivities({ ffmpeg: counting.ffmpeg, storage, egress, limits }).makePreview, { jobId, ...ref, params: params({ timestamp: '00:00:05' }), progressRange: [40, 99] as [number, number] })) as JobOutput;
      const clip = (await activityEnv().run(createPreviewActivities({ ffmpeg: counting.ffmpeg, storage, egress, limits }).makePreview, { jobId, ...ref, params: params({ preview_type: 'clip', start: '00:00:04', duration: 2 }), progressRange: [40, 99] as [number, number] })) as JobOutput;
      assert.equal(counting.probes, 1, 'neither step probed the file again, nor the thumbnail or clip it wrote');
      // the same frame as a step that probes the file itself
      const own = (await activityEnv().run(createFingerprintActivities({ ffmpeg, storage, egress, limits }).fingerprintFrame, { jobId, sourceFile: src.sourceFile, media: null, title: 't', timestamp: 5, hashSize: 8 as const, progressRange: [40, 99] as [number, number] })) as JobOutput;
      assert.deepEqual(fp.resultData, own.resultData);
      const v = videoStream(await ffprobe(storage.outputPath(thumb.outputFile)))!;
      assert.deepEqual([thumb.resultData.width, thumb.resultData.height], [v.width, v.height], 'the thumbnail\'s size, read from its header, is what ffprobe reads');
      const clipProbe = await ffprobe(storage.outputPath(clip.outputFile));
      const cv = videoStream(clipProbe)!;
      assert.deepEqual([clip.resultData.width, clip.resultData.height, clip.resultData.duration], [cv.width, cv.height, Math.round(Number(clipProbe.format.duration) * 1000) / 1000], 'the clip\'s size and duration, read from its index, are what ffprobe reads');
    });

    it('a seek read that fails (an origin that stops honouring ranges, an index at the end) falls back to a download inside the step', async () => {
      const preview = createPreviewActivities({ ffmpeg, storage, egress, limits }).makePreview;
      const fingerprint = createFingerprintActivities({ ffmpeg, storage, egress, limits }).fingerprintFrame;
      // as if the range check had passed: the step itself meets an origin that ignores ranges
      const media = { url: mo.url('norange', 'speech-tail.mp4'), headers: {}, probe: null };
      const jobId = crypto.randomUUID();
      const out = (await activityEnv().run(preview, { jobId, sourceFile: null, media, params: params({ preview_type: 'mosaic', columns: 3, rows: 2, width: 480 }), progressRange: [40, 99] as [number, number] })) as JobOutput;
      const v = videoStream(await ffprobe(storage.outputPath(out.outputFile)))!;
      assert.deepEqual([v.codec_name, v.width, v.height], ['mjpeg', 480, 240]);
      assert.ok(fs.existsSync(path.join(storage.workDirOf(jobId), 'download', 'source.mp4')), 'the source was downloaded into the job\'s work folder');
      const fp = (await activityEnv().run(fingerprint, { jobId: crypto.randomUUID(), sourceFile: null, media, title: 't', timestamp: 5, hashSize: 8 as const, progressRange: [40, 99] as [number, number] })) as JobOutput;
      const local = await resolve(mo.url('range', 'speech-fast.mp4'), 'video');
      const ref = (await activityEnv().run(fingerprint, { jobId: crypto.randomUUID(), sourceFile: null, media: local.media, title: 't', timestamp: 5, hashSize: 8 as const, progressRange: [40, 99] as [number, number] })) as JobOutput;
      assert.deepEqual(fp.resultData, ref.resultData, 'the same frame, read either way');
    });
  });
});
