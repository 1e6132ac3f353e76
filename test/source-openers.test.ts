// The three ways a source opens, each on its own (real storage, ffprobe, yt-dlp and a fixture
// origin): an upload, a plain media file at a URL, a page yt-dlp reads. And the question every
// source step asks first: which of the three a URL is.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fetchDirectFile, openDirectFile } from '../activities/source/direct-file';
import { fetchWithYtdlp, openWithYtdlp } from '../activities/source/extractor';
import { originOf } from '../activities/source/origin';
import type { DownloadSourceInput, ResolveSourceInput, SourceDeps } from '../activities/source/types';
import { takeUpload } from '../activities/source/upload';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import { LocalStorage } from '../engines/storage';
import { createYtDlpEngine } from '../engines/ytdlp/ytdlp.engine';
import { loadConfig } from '../lib/config';
import { USER_FAILURE_TYPES } from '../lib/job-failure';
import { sourceLimits } from '../lib/plans';
import { uploadSource } from '../lib/uploads';
import { expectNonRetryable, runActivity } from './helpers/activity-env';
import { testEgress } from './helpers/egress';
import { FIXTURE, fixtureCacheDir, serveIgnoringRange, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';

describe('opening a source: upload, direct file and yt-dlp, each alone', function () {
  let fx: FixturePlatform;
  let dataDir: string;
  let deps: SourceDeps;
  let egress: EgressProxy;
  const config = loadConfig({ ALLOW_PRIVATE_NETWORK: '1' });
  const ffmpeg = createFfmpegEngine(config);
  const limitsConfig: SourceDeps['config'] = { allowPrivateNetwork: true, maxSourceDurationSeconds: 4 * 3600, maxSourceBytes: 4 * 1024 ** 3, allowLive: false };
  const limits = sourceLimits(undefined, limitsConfig);
  const media = (name: string) => path.join(fixtureCacheDir(), 'media', name);
  const input = (url: string, over: Partial<ResolveSourceInput> = {}): ResolveSourceInput => ({ jobId: crypto.randomUUID(), url, quality: '720p', format: null, reads: 'whole', progressRange: [0, 40], ...over });
  const workFile = (jobId: string, relative: string) => path.join(deps.storage.workDirOf(jobId), relative);

  before(async () => {
    egress = await testEgress();
    fx = await startFixturePlatform({
      extraRoutes: (req, res, p) => {
        if (p !== '/no-range/v480.mp4') return false;
        serveIgnoringRange(req, res, media('v480.mp4'));
        return true;
      },
    });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-open-'));
    const storage = new LocalStorage(loadConfig({ DATA_DIR: dataDir }));
    deps = { ytdlp: createYtDlpEngine({ binary: config.ytdlpPath, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath }), ffmpeg, storage, egress, config: limitsConfig };
  });
  after(async () => {
    await fx?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describe('where a source comes from', () => {
    it('an upload by its reference (no request made), a media file by its HEAD answer, anything else is a page for yt-dlp', async () => {
      const before = fx.hits.get('/media/v480.mp4') ?? 0;
      assert.deepEqual(await runActivity(originOf, uploadSource('upl_abcdefghijklmnopqrstuvwx'), { uploads: true, allowPrivateNetwork: true }), { kind: 'upload', uploadId: 'upl_abcdefghijklmnopqrstuvwx' });
      const direct = await runActivity(originOf, fx.url('/media/v480.mp4'), { uploads: true, allowPrivateNetwork: true });
      assert.equal(direct.kind, 'direct');
      assert.equal(direct.kind === 'direct' && direct.media.length, fs.statSync(media('v480.mp4')).size);
      assert.equal(fx.hits.get('/media/v480.mp4'), before + 1, 'one HEAD request');
      assert.deepEqual(await runActivity(originOf, fx.url('/watch/trailer'), { uploads: true, allowPrivateNetwork: true }), { kind: 'extractor' });
    });

    it('a private address is refused before any request when the service does not allow it', async () => {
      const before = fx.hits.get('/media/v480.mp4') ?? 0;
      await expectNonRetryable(runActivity(originOf, fx.url('/media/v480.mp4'), { uploads: true, allowPrivateNetwork: false }), USER_FAILURE_TYPES.rejected, /The source URL/);
      assert.equal(fx.hits.get('/media/v480.mp4') ?? 0, before, 'no request reached the origin');
    });
  });

  describe('an upload', () => {
    async function stored(file: string, info: { filename: string; content_type: string; duration?: number | null } | null): Promise<string> {
      const id = `upl_${crypto.randomBytes(12).toString('hex')}`;
      fs.mkdirSync(path.dirname(deps.storage.uploadPath(id)), { recursive: true });
      fs.copyFileSync(file, deps.storage.uploadPath(id));
      if (info) await deps.storage.commitUpload(id, info);
      return id;
    }

    it('lands in the work folder named for its type, titled by its file name, its duration as received', async () => {
      const id = await stored(media('audio.m4a'), { filename: 'Interview take 2.m4a', content_type: 'audio/mp4', duration: 4 });
      const jobId = crypto.randomUUID();
      const taken = await runActivity(takeUpload, deps, jobId, id, limits);
      assert.deepEqual([taken.title, taken.duration, path.extname(taken.sourceFile)], ['Interview take 2', 4, '.m4a']);
      assert.equal(fs.statSync(workFile(jobId, taken.sourceFile)).size, fs.statSync(media('audio.m4a')).size);
    });

    it('stored without its info, it is measured again with ffprobe', async () => {
      const id = await stored(media('v480.mp4'), null);
      const taken = await runActivity(takeUpload, deps, crypto.randomUUID(), id, limits);
      assert.ok(Math.abs((taken.duration ?? 0) - FIXTURE.durationSeconds) < 0.1, String(taken.duration));
      assert.equal(path.extname(taken.sourceFile), '.mp4');
    });

    it('longer than the plan allows: rejected before its bytes move; gone: unavailable, saying to upload again', async () => {
      const id = await stored(media('audio.m4a'), { filename: 'a.m4a', content_type: 'audio/mp4', duration: 5 * 3600 });
      await expectNonRetryable(runActivity(takeUpload, deps, crypto.randomUUID(), id, limits), USER_FAILURE_TYPES.rejected, /longer than/);
      await expectNonRetryable(runActivity(takeUpload, deps, crypto.randomUUID(), 'upl_000000000000000000000000', limits), USER_FAILURE_TYPES.unavailable, /upload the file again/);
    });
  });

  describe('a plain media file', () => {
    it('a job reading part of it reads it in place, measured from its MP4 index: nothing downloaded', async () => {
      const src = await runActivity(openDirectFile, deps, input(fx.url('/media/v480.mp4'), { reads: 'video' }), limits, null);
      assert.equal(src.sourceFile, null);
      assert.equal(src.media?.url, fx.url('/media/v480.mp4'));
      assert.ok(src.media?.probe?.streams.some((s) => s.codec_type === 'video' && s.height === 480), JSON.stringify(src.media?.probe?.streams));
      assert.ok(Math.abs((src.duration ?? 0) - FIXTURE.durationSeconds) < 0.1, String(src.duration));
    });

    it('an origin that ignores Range is downloaded instead, and measured on disk', async () => {
      const job = input(fx.url('/no-range/v480.mp4'), { reads: 'video' });
      const src = await runActivity(openDirectFile, deps, job, limits, null);
      assert.equal(src.media, null);
      assert.equal(src.sourceFile, path.join('download', 'source.mp4'));
      assert.equal(fs.statSync(workFile(job.jobId, src.sourceFile)).size, fs.statSync(media('v480.mp4')).size);
      assert.ok(src.sourceProbe?.streams.some((s) => s.codec_type === 'video'));
    });

    it('fetched whole: the declared size over the limit fails before a byte moves; a 404 is unavailable; a clip past the end fails', async () => {
      const small = { ...limits, maxBytes: 1000 };
      const before = fx.hits.get('/media/v480.mp4') ?? 0;
      await expectNonRetryable(runActivity(fetchDirectFile, deps, input(fx.url('/media/v480.mp4')), small, 50_000), USER_FAILURE_TYPES.rejected, /larger than/);
      assert.equal(fx.hits.get('/media/v480.mp4') ?? 0, before, 'no request for the body');
      await expectNonRetryable(runActivity(fetchDirectFile, deps, input(fx.url('/media/missing.mp4')), limits, null), USER_FAILURE_TYPES.unavailable, /not available/);
      await expectNonRetryable(runActivity(openDirectFile, deps, input(fx.url('/media/v480.mp4'), { reads: 'video', clipStart: 10, clipEnd: 12 }), limits, null), USER_FAILURE_TYPES.rejected, /past|beyond|after|longer/);
    });
  });

  describe('a page yt-dlp reads', () => {
    it('downloaded from the probe it made, with the page\'s title and duration', async () => {
      const job = input(fx.url('/watch/trailer'));
      const src = await runActivity(openWithYtdlp, deps, job, limits);
      assert.equal(src.title, FIXTURE.page.title);
      assert.equal(src.duration, FIXTURE.page.duration);
      assert.ok(src.sourceFile && fs.statSync(workFile(job.jobId, src.sourceFile)).size > 0, String(src.sourceFile));
      assert.equal(src.media, null);
    });

    it('read in place when the page names one seekable file and the job reads part of it', async () => {
      const src = await runActivity(openWithYtdlp, deps, input(fx.url('/watch/trailer'), { reads: 'video' }), limits);
      assert.equal(src.sourceFile, null);
      assert.match(src.media?.url ?? '', /\/media\/v\d+\.mp4$/);
    });

    it('fetched in one run (speech steps): title and duration from the info JSON it wrote; a page with no media is unsupported', async () => {
      const job: DownloadSourceInput = { jobId: crypto.randomUUID(), url: fx.url('/watch/trailer'), quality: 'audio', format: null, progressRange: [0, 40] };
      const src = await runActivity(fetchWithYtdlp, deps, job, limits);
      assert.deepEqual([src.title, src.duration], [FIXTURE.page.title, FIXTURE.page.duration]);
      assert.ok(fs.statSync(workFile(job.jobId, src.sourceFile)).size > 0);
      await expectNonRetryable(runActivity(openWithYtdlp, deps, input(fx.url('/watch/nomedia')), limits), USER_FAILURE_TYPES.unsupported, /./);
    });
  });
});
