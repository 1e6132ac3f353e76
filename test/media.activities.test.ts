import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createSourceActivities, type SourceDeps } from '../activities/source/activities';
import { createDownloadActivities } from '../operations/download/activities';
import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import { createYtDlpEngine } from '../engines/ytdlp/ytdlp.engine';
import { loadConfig } from '../lib/config';
import { USER_FAILURE_TYPES } from '../lib/job-failure';
import type { DownloadFormat, Quality } from '../operations/download/spec';
import { LocalStorage, Storage } from '../engines/storage';
import { testEgress } from './helpers/egress';
import { FIXTURE, fixtureCacheDir, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { originMedia, startMediaOrigin, type MediaOrigin } from './helpers/media-origin';
import { hasIndexInFront } from '../engines/ffmpeg/mp4-index';
import { activityEnv, runActivity, expectNonRetryable } from './helpers/activity-env';
import { audioStream, ffprobe, videoStream } from './helpers/media';

describe('fetch and process activities (real yt-dlp and ffmpeg)', function () {
  let fx: FixturePlatform;
  let dataDir: string;
  let storage: Storage;
  const config = loadConfig({ ALLOW_PRIVATE_NETWORK: '1' });
  const ytdlp = createYtDlpEngine({ binary: config.ytdlpPath, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath });
  let egress: EgressProxy;
  const ffmpeg = createFfmpegEngine(config);
  const execFileP = promisify(execFile);
  const limits: SourceDeps['config'] = { allowPrivateNetwork: true, maxSourceDurationSeconds: 4 * 3600, maxSourceBytes: 4 * 1024 ** 3, allowLive: false };

  before(async () => {
    egress = await testEgress();
    fx = await startFixturePlatform();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-act-'));
    storage = new LocalStorage(loadConfig({ DATA_DIR: dataDir }));
  });
  after(async () => {
    await fx?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const fetchActs = (over: Partial<SourceDeps['config']> = {}) => createSourceActivities({ ytdlp, ffmpeg, storage, egress, config: { ...limits, ...over } });

  describe('readInfo', () => {
    it('reads page metadata (og:video + JSON-LD) into the Video info object', async () => {
      const info = await runActivity(fetchActs().readInfo, fx.url('/watch/trailer'));
      assert.equal(info.url, fx.url('/watch/trailer'));
      assert.equal(info.title, FIXTURE.page.title);
      assert.equal(info.description, FIXTURE.page.description);
      assert.equal(info.duration, FIXTURE.page.duration);
      assert.equal(info.upload_date, FIXTURE.page.uploadDate);
      assert.equal(info.thumbnail, fx.url(FIXTURE.page.thumbnailPath));
      assert.deepEqual([info.tags, info.categories, info.subtitles], [[], [], []]);
      assert.ok(info.formats.length >= 1);
      assert.equal(info.formats[0]!.height, 720);
      for (const f of info.formats) {
        assert.equal(typeof f.format_id, 'string');
        assert.equal(typeof f.ext, 'string');
        assert.equal(typeof f.audio_only, 'boolean');
      }
      for (const k of ['view_count', 'like_count', 'channel', 'channel_url']) assert.ok(k in info, k);
    });

    it('a page showing one video three ways (og:video, JSON-LD, <video>) with no duration: one video, the page\'s title, the duration measured; jobs see the same', async () => {
      const url = fx.url('/watch/two-views');
      const info = await runActivity(fetchActs().readInfo, url);
      assert.equal(info.title, FIXTURE.page.title);
      assert.ok(Math.abs((info.duration ?? 0) - FIXTURE.durationSeconds) < 0.1, `duration ${info.duration}`);
      assert.deepEqual(info.formats.map((f) => f.height), [480], 'one video, not two numbered copies');
      const jobId = crypto.randomUUID();
      const source = await runActivity(fetchActs().resolveSource, { jobId, url, quality: '720p', format: null, reads: 'whole', progressRange: [0, 40] });
      assert.equal(source.title, FIXTURE.page.title);
    });

    it('measures a direct media file with ffprobe: duration, dimensions, codecs, size', async () => {
      const info = await runActivity(fetchActs().readInfo, fx.url('/media/v1080.mp4'));
      assert.equal(info.title, 'v1080');
      assert.ok(Math.abs((info.duration ?? 0) - FIXTURE.durationSeconds) < 0.1, String(info.duration));
      assert.equal(info.formats.length, 1);
      const f = info.formats[0]!;
      assert.deepEqual([f.width, f.height, f.quality, f.vcodec, f.acodec, f.audio_only], [1920, 1080, '1080p', 'h264', 'aac', false]);
      assert.equal(f.fps, 25);
      assert.equal(f.filesize, Number((await fetch(fx.url('/media/v1080.mp4'), { method: 'HEAD' })).headers.get('content-length')));
      const audio = await runActivity(fetchActs().readInfo, fx.url('/media/audio.m4a'));
      assert.equal(audio.formats[0]!.audio_only, true);
      assert.equal(audio.formats[0]!.vcodec, null);
      assert.equal(audio.formats[0]!.acodec, 'aac');
    });

    it('lists every rendition of an HLS stream with its height and codecs', async () => {
      const info = await runActivity(fetchActs().readInfo, fx.url('/hls/master.m3u8'));
      const heights = info.formats.map((f) => f.height).sort((a, b) => (a ?? 0) - (b ?? 0));
      assert.deepEqual(heights, [480, 720, 1080]);
      const f720 = info.formats.find((f) => f.height === 720)!;
      assert.equal(f720.quality, '720p');
      assert.equal(f720.width, 1280);
      assert.match(f720.vcodec ?? '', /^avc1/);
      assert.equal(f720.audio_only, false);
      assert.equal(info.duration, FIXTURE.durationSeconds);
    });

    it('fails as unsupported for a page without media, and unavailable for a 404', async () => {
      await expectNonRetryable(runActivity(fetchActs().readInfo, fx.url('/watch/nomedia')), USER_FAILURE_TYPES.unsupported, /No platform handler supports/);
      await expectNonRetryable(runActivity(fetchActs().readInfo, fx.url('/missing')), USER_FAILURE_TYPES.unavailable, /404/);
    });

    it('refuses private addresses unless allowed', async () => {
      await expectNonRetryable(runActivity(fetchActs({ allowPrivateNetwork: false }).readInfo, fx.url('/watch/trailer')), USER_FAILURE_TYPES.rejected, /private or reserved/);
    });
  });

  describe('probeSource limits', () => {
    it('refuses a source longer than the maximum duration', async () => {
      await expectNonRetryable(runActivity(fetchActs({ maxSourceDurationSeconds: 2 }).probeSource, fx.url('/hls/master.m3u8')), USER_FAILURE_TYPES.rejected, /^The source is longer than 2 s, the limit of this service \(it is 4 s long\)$/);
    });
    it('fetchSource enforces the same limits in one yt-dlp run and returns the file with title and duration', async () => {
      const jobId = crypto.randomUUID();
      const input = { jobId, url: fx.url('/watch/trailer'), quality: 'audio' as const, format: null, progressRange: [0, 15] as [number, number] };
      await expectNonRetryable(runActivity(fetchActs({ maxSourceDurationSeconds: 2 }).fetchSource, input), USER_FAILURE_TYPES.rejected, /outside the limits/);
      const okJob = crypto.randomUUID();
      const got = await runActivity(fetchActs().fetchSource, { ...input, jobId: okJob });
      assert.equal(got.title, FIXTURE.page.title);
      assert.equal(got.duration, 4);
      const probe = await ffprobe(path.join(storage.workDirOf(okJob), got.sourceFile));
      assert.ok(audioStream(probe));
    });

    it('fetchSource takes a direct media file without yt-dlp, with the same limits', async () => {
      const input = { jobId: crypto.randomUUID(), url: fx.url('/media/audio.m4a'), quality: 'audio' as const, format: null, progressRange: [0, 15] as [number, number] };
      await expectNonRetryable(runActivity(fetchActs({ maxSourceDurationSeconds: 2 }).fetchSource, input), USER_FAILURE_TYPES.rejected, /^The source is longer than 2 s, the limit of this service \(it is 4 s long\)$/);
      await expectNonRetryable(runActivity(fetchActs({ maxSourceBytes: 1000 }).fetchSource, { ...input, jobId: crypto.randomUUID() }), USER_FAILURE_TYPES.rejected, /^The source is larger than 1000 bytes, the limit of this service \(it is [\d.]+ KiB\)$/);
      await expectNonRetryable(runActivity(fetchActs({ allowPrivateNetwork: false }).fetchSource, { ...input, jobId: crypto.randomUUID() }), USER_FAILURE_TYPES.rejected, /private or reserved/);
      const okJob = crypto.randomUUID();
      const got = await runActivity(fetchActs().fetchSource, { ...input, jobId: okJob });
      assert.deepEqual([got.title, got.sourceFile], ['audio', 'download/source.m4a']);
      assert.ok(Math.abs((got.duration ?? 0) - FIXTURE.durationSeconds) < 0.1);
      const file = path.join(storage.workDirOf(okJob), got.sourceFile);
      assert.equal(fs.statSync(file).size, Number((await fetch(fx.url('/media/audio.m4a'), { method: 'HEAD' })).headers.get('content-length')));
      assert.equal(audioStream(await ffprobe(file))?.codec_name, 'aac');
    });

    it('accepts a source within the limits and reports title and duration', async () => {
      const s = await runActivity(fetchActs().probeSource, fx.url('/watch/trailer'));
      assert.deepEqual(s, { title: FIXTURE.page.title, duration: 4 });
    });
  });

  describe('download and finalize', () => {
    async function download(url: string, quality: Quality, format: DownloadFormat | null) {
      const jobId = crypto.randomUUID();
      const beats: number[] = [];
      const sourceFile = (await activityEnv((p) => beats.push(p)).run(fetchActs().downloadSource, { jobId, url, quality, format, progressRange: [0, 80] as [number, number] })) as string;
      const finalize = createDownloadActivities({ ffmpeg, storage }).finalizeDownload;
      const out = (await activityEnv((p) => beats.push(p)).run(finalize, { jobId, sourceFile, quality, format, title: 'T', progressRange: [80, 99] as [number, number] })) as Awaited<ReturnType<typeof finalize>>;
      const file = storage.outputPath(out.outputFile);
      const probe = await ffprobe(file);
      assert.equal(out.resultData.filesize, fs.statSync(file).size);
      assert.equal(out.resultData.title, 'T');
      assert.ok(Math.abs(Number(out.resultData.duration) - Number(probe.format.duration)) < 0.01);
      return { out, probe, beats, file };
    }

    for (const [quality, height] of [['480p', 480], ['720p', 720], ['1080p', 1080], ['best', 1080]] as const) {
      it(`picks the ${height}p rendition of an HLS stream for quality ${quality} and delivers mp4`, async () => {
        const { out, probe } = await download(fx.url('/hls/master.m3u8'), quality, 'mp4');
        assert.equal(videoStream(probe)?.height, height);
        assert.equal(videoStream(probe)?.codec_name, 'h264');
        assert.equal(audioStream(probe)?.codec_name, 'aac');
        assert.match(probe.format.format_name, /mp4/);
        assert.ok(Math.abs(Number(probe.format.duration) - FIXTURE.durationSeconds) < 0.2);
        assert.equal(out.resultData.format, 'mp4');
      });
    }

    it('re-encodes to webm (VP9/Opus) with progress heartbeats', async () => {
      const { probe, beats } = await download(fx.url('/media/v480.mp4'), 'best', 'webm');
      assert.equal(videoStream(probe)?.codec_name, 'vp9');
      assert.equal(audioStream(probe)?.codec_name, 'opus');
      assert.match(probe.format.format_name, /webm/);
      assert.ok(beats.length > 0, 'heartbeats carry progress');
      assert.ok(beats.every((b, i) => b >= 0 && b <= 99 && (i === 0 || b >= beats[i - 1]! || b >= 80)), beats.join(','));
    });

    it('remuxes into mkv without re-encoding', async () => {
      const { probe } = await download(fx.url('/media/v720.mp4'), 'best', 'mkv');
      assert.match(probe.format.format_name, /matroska/);
      assert.equal(videoStream(probe)?.codec_name, 'h264');
      assert.equal(videoStream(probe)?.height, 720);
    });

    it('keeps a webm source as it is when no format is asked', async () => {
      const { probe, out } = await download(fx.url('/media/clip.webm'), 'best', null);
      assert.equal(out.resultData.format, 'webm');
      assert.equal(videoStream(probe)?.codec_name, 'vp9');
    });

    it('extracts audio-only mp3 and wav', async () => {
      const mp3 = await download(fx.url('/hls/master.m3u8'), 'audio', 'mp3');
      assert.equal(videoStream(mp3.probe), undefined);
      assert.equal(audioStream(mp3.probe)?.codec_name, 'mp3');
      const wav = await download(fx.url('/media/v480.mp4'), 'best', 'wav');
      assert.equal(videoStream(wav.probe), undefined);
      assert.equal(audioStream(wav.probe)?.codec_name, 'pcm_s16le');
      assert.ok(Math.abs(Number(wav.probe.format.duration) - FIXTURE.durationSeconds) < 0.1);
    });

    it('keeps the audio stream as it is for quality audio with no format', async () => {
      const { probe, out } = await download(fx.url('/media/audio.m4a'), 'audio', null);
      assert.equal(out.resultData.format, 'm4a');
      assert.equal(audioStream(probe)?.codec_name, 'aac');
      assert.equal(videoStream(probe), undefined);
    });

    it('format mp4 keeps a fetched MP4 with its index in front as it is (a second name, no copy) and remuxes one with its index at the end or in fragments, the index then in front', async () => {
      const finalize = createDownloadActivities({ ffmpeg, storage }).finalizeDownload;
      const fixture = path.join(fixtureCacheDir(), 'media', 'v480.mp4');
      // the same streams with the index written after the media data
      const indexLast = path.join(dataDir, 'v480-index-last.mp4');
      await execFileP('ffmpeg', ['-v', 'error', '-y', '-i', fixture, '-map', '0', '-c', 'copy', indexLast]);
      // and fragmented (an empty index in front, the samples' tables in fragments after it)
      const fragmented = path.join(dataDir, 'v480-fragmented.mp4');
      await execFileP('ffmpeg', ['-v', 'error', '-y', '-i', fixture, '-map', '0', '-c', 'copy', '-movflags', 'frag_keyframe+empty_moov', fragmented]);
      assert.equal(await hasIndexInFront(fixture), true);
      assert.equal(await hasIndexInFront(indexLast), false);
      assert.equal(await hasIndexInFront(fragmented), false);
      for (const [name, file, kept] of [['index in front', fixture, true], ['index at the end', indexLast, false], ['fragmented', fragmented, false]] as const) {
        const jobId = crypto.randomUUID();
        const sourceFile = path.join('download', 'source.mp4');
        fs.mkdirSync(path.join(storage.workDirOf(jobId), 'download'), { recursive: true });
        fs.copyFileSync(file, path.join(storage.workDirOf(jobId), sourceFile));
        const out = await runActivity(finalize, { jobId, sourceFile, quality: 'best' as Quality, format: 'mp4' as DownloadFormat, title: 'T', progressRange: [80, 99] as [number, number] });
        const output = storage.outputPath(out.outputFile);
        const fetched = fs.statSync(path.join(storage.workDirOf(jobId), sourceFile));
        assert.equal(out.resultData.format, 'mp4');
        assert.equal(out.resultData.filesize, fs.statSync(output).size);
        assert.equal(fs.statSync(output).ino === fetched.ino, kept, `${name}: the output ${kept ? 'is' : 'is not'} the fetched file`);
        assert.equal(await hasIndexInFront(output), true, `${name}: the output has its index in front`);
        const probe = await ffprobe(output);
        assert.deepEqual([videoStream(probe)?.codec_name, audioStream(probe)?.codec_name], ['h264', 'aac']);
        assert.ok(Math.abs(Number(probe.format.duration) - FIXTURE.durationSeconds) < 0.2, `${name}: ${probe.format.duration} s`);
      }
    });

    it('fails as unavailable when the source disappears', async () => {
      await expectNonRetryable(
        runActivity(fetchActs().downloadSource, { jobId: crypto.randomUUID(), url: fx.url('/missing'), quality: 'best', format: null, progressRange: [0, 80] as [number, number] }),
        USER_FAILURE_TYPES.unavailable,
        /404/,
      );
    });
  });

  describe('a speech job\'s file at a URL: only its audio track is kept', () => {
    let origin: MediaOrigin;
    let media: string;
    before(async function () {
      this.timeout(5 * 60_000);
      media = await originMedia();
      origin = await startMediaOrigin(media);
    });
    after(async () => origin?.close());

    const fetchSpeech = async (url: string) => {
      const jobId = crypto.randomUUID();
      const fetched = (await runActivity(fetchActs().fetchSource, { jobId, url, quality: 'audio', format: null, progressRange: [0, 15] as [number, number] })) as { sourceFile: string; duration: number | null };
      const file = await storage.workFile(jobId, fetched.sourceFile);
      return { fetched, file, probe: await ffprobe(file) };
    };
    const sourceSeconds = async (name: string) => Number((await ffprobe(path.join(media, name))).format.duration);

    for (const name of ['speech-fast.mp4', 'speech-tail.mp4']) {
      it(`${name} from an origin that serves ranges: the audio track copied, no picture, the same length, a fraction of the bytes`, async () => {
        const { fetched, file, probe } = await fetchSpeech(origin.url('range', name));
        assert.equal(path.basename(fetched.sourceFile), 'source.mka');
        assert.deepEqual(probe.streams.map((s) => `${s.codec_type}:${s.codec_name}`), ['audio:aac']);
        assert.ok(Math.abs(Number(probe.format.duration) - (await sourceSeconds(name))) < 0.1, `duration ${probe.format.duration}`);
        assert.ok(fs.statSync(file).size < fs.statSync(path.join(media, name)).size / 2, `${fs.statSync(file).size} bytes kept of ${fs.statSync(path.join(media, name)).size}`);
      });
    }

    it('an origin that sends no length (chunked): the file fetched whole, as before', async () => {
      const { fetched, probe } = await fetchSpeech(origin.url('chunked', 'speech-tail.mp4'));
      assert.equal(path.basename(fetched.sourceFile), 'source.mp4');
      assert.ok(videoStream(probe) && audioStream(probe));
    });

    it('an origin that ignores ranges, the index at the end: whichever way it is read, the audio is whole', async () => {
      const { probe } = await fetchSpeech(origin.url('norange', 'speech-tail.mp4'));
      assert.equal(audioStream(probe)?.codec_name, 'aac');
      assert.ok(Math.abs(Number(probe.format.duration) - (await sourceSeconds('speech-tail.mp4'))) < 0.1, `duration ${probe.format.duration}`);
    });

    it('a file cut short (no index): fails as unreadable media, not as a tool error', async () => {
      await assert.rejects(fetchSpeech(origin.url('range', 'speech-cut.mp4')), (err: Error) => {
        assert.doesNotMatch(err.message, /ffmpeg|matroska/i);
        return true;
      });
    });
  });

  describe('source limits while streaming: a source that never ends stops at its plan\'s limit, once', () => {
    let endless: { url(type: string): string; served: { requests: number; downloads: number; bytes: number }; close(): Promise<void> };

    before(async () => {
      // 60 s of 32 kbit/s MP3 with no Xing or ID3 header: repeated, it is one endless valid stream
      const loop = path.join(os.tmpdir(), 'mediasvc-endless-loop-v1.mp3');
      if (!fs.existsSync(loop)) {
        await execFileP('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=22050:duration=60', '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '32k', '-write_xing', '0', '-id3v2_version', '0', '-f', 'mp3', `${loop}.${process.pid}.tmp`]);
        fs.renameSync(`${loop}.${process.pid}.tmp`, loop);
      }
      const chunk = fs.readFileSync(loop);
      // a download is a request that was read past 1 MB (yt-dlp's extractor also opens the URL to sniff its first bytes)
      const served = { requests: 0, downloads: 0, bytes: 0 };
      const server = http.createServer((req, res) => {
        const type = req.url?.includes('octet') ? 'application/octet-stream' : 'audio/mpeg';
        res.writeHead(200, { 'content-type': type });
        if (req.method === 'HEAD') return void res.end();
        served.requests++;
        let sent = 0;
        // paced at 8 MB/s, as a fast link would deliver it, never ending
        const timer = setInterval(() => {
          for (let i = 0; i < 4 && !res.destroyed; i++) {
            res.write(chunk);
            served.bytes += chunk.length;
            sent += chunk.length;
            if (sent - chunk.length < 1e6 && sent >= 1e6) served.downloads++;
          }
        }, 125);
        res.on('close', () => clearInterval(timer));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const port = (server.address() as AddressInfo).port;
      endless = {
        url: (type) => `http://127.0.0.1:${port}/radio-${type}.mp3`,
        served,
        close: () => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }),
      };
    });
    after(async () => endless?.close());

    for (const type of ['audio', 'octet'] as const) {
      it(`${type === 'audio' ? 'a direct audio/mpeg stream (read by Node)' : 'an application/octet-stream (read by yt-dlp)'}: failed at the free plan's hour, not retried, said plainly`, async () => {
        const before = { ...endless.served };
        const input = { jobId: crypto.randomUUID(), plan: 'free' as const, url: endless.url(type), quality: 'audio' as const, format: null, progressRange: [0, 15] as [number, number] };
        await expectNonRetryable(runActivity(fetchActs().fetchSource, input), USER_FAILURE_TYPES.rejected, /^The source is longer than 1 h, the limit of the free plan$/);
        const bytes = endless.served.bytes - before.bytes;
        console.log(`      ${type}: stopped after ${(bytes / 1e6).toFixed(1)} MB served in ${endless.served.requests - before.requests} request(s), ${endless.served.downloads - before.downloads} of them read past 1 MB; 1 h of it is ${(32_000 / 8 * 3600 / 1e6).toFixed(1)} MB`);
        assert.equal(endless.served.downloads - before.downloads, 1, 'one download: a limit is never retried');
        assert.ok(bytes < 64e6, `${bytes} bytes served: the stream was not stopped near its limit`);
        assert.ok(bytes > (32_000 / 8) * 3600 * 0.9, `${bytes} bytes: stopped before the limit was reached`);
      });
    }
  });
});
