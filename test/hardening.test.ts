// Hostile sources at the activity level, with the real tools: pictures that declare far more pixels
// than their bytes hold, measured by the peak memory of every tool process the service starts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createFingerprintActivities } from '../operations/fingerprint/activities';
import { createSourceActivities, type ResolvedSource, type SourceDeps } from '../activities/source/activities';
import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import { LocalStorage, Storage } from '../engines/storage';
import { createYtDlpEngine } from '../engines/ytdlp/ytdlp.engine';
import { loadConfig } from '../lib/config';
import { USER_FAILURE_TYPES } from '../lib/job-failure';
import { expectNonRetryable, runActivity } from './helpers/activity-env';
import { testEgress } from './helpers/egress';
import { fixtureCacheDir, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { withoutInternals } from '../lib/user-text';

const run = promisify(execFile);

// A PNG declaring 16000×16000 RGB pixels in well under a MiB: every row black, deflated in one stream.
const PNG_BOMB = `
import struct, sys, zlib
w = h = 16000
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
c = zlib.compressobj(9)
row = bytes(1 + w * 3)
idat = b''.join(c.compress(row) for _ in range(h)) + c.flush()
sys.stdout.buffer.write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', idat) + chunk(b'IEND', b''))
`;

describe('hostile pictures: an image bomb is refused before any tool decodes it', function () {
  this.timeout(5 * 60_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-hardening-'));
  const rssLog = path.join(dir, 'tools-rss.log');
  let server: http.Server;
  let base: string;
  let storage: Storage;

  before(async () => {
    const { stdout } = await run('python3', ['-c', PNG_BOMB], { encoding: 'buffer', maxBuffer: 16 * 1024 ** 2 });
    fs.writeFileSync(path.join(dir, 'bomb.png'), stdout);
    // every ffmpeg and ffprobe the activities start (yt-dlp's too) runs under GNU time, which logs its peak RSS
    for (const tool of ['ffmpeg', 'ffprobe']) {
      fs.writeFileSync(path.join(dir, tool), `#!/bin/sh\nexec /usr/bin/time -a -o '${rssLog}' -f '${tool} %M' ${tool} "$@"\n`, { mode: 0o755 });
    }
    server = http.createServer((req, res) => {
      const body = fs.readFileSync(path.join(dir, 'bomb.png'));
      // served as what it is, and as a video (a lie a hostile origin tells)
      res.writeHead(200, { 'content-type': req.url?.includes('as-video') ? 'video/mp4' : 'image/png', 'content-length': body.length, 'accept-ranges': 'none' });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    storage = new LocalStorage(loadConfig({ DATA_DIR: dir }));
  });
  after(async () => {
    server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const name of ['bomb.png', 'as-video/bomb.mp4']) {
    it(`a 16000×16000 PNG (${name}) given as a fingerprint source fails in words about its size, every tool under 200 MB`, async () => {
      fs.rmSync(rssLog, { force: true });
      const config = loadConfig({ ALLOW_PRIVATE_NETWORK: '1', FFMPEG_PATH: path.join(dir, 'ffmpeg'), FFPROBE_PATH: path.join(dir, 'ffprobe') });
      const ffmpeg = createFfmpegEngine(config);
      const ytdlp = createYtDlpEngine({ binary: config.ytdlpPath, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath });
      const limits: SourceDeps['config'] = { allowPrivateNetwork: true, maxSourceDurationSeconds: 4 * 3600, maxSourceBytes: 4 * 1024 ** 3, allowLive: false };
      const egress = await testEgress();
      const jobId = crypto.randomUUID();
      const steps = async () => {
        const source = (await runActivity(createSourceActivities({ ytdlp, ffmpeg, storage, egress, config: limits }).resolveSource, {
          jobId, url: `${base}/${name}`, quality: '720p', format: null, reads: 'video', progressRange: [0, 40],
        })) as ResolvedSource;
        return runActivity(createFingerprintActivities({ ffmpeg, storage, egress, limits }).fingerprintFrame, {
          jobId, sourceFile: source.sourceFile, media: source.media, title: source.title, timestamp: null, hashSize: 8, progressRange: [40, 99],
        });
      };
      await expectNonRetryable(steps(), USER_FAILURE_TYPES.unavailable, /^The source could not be read: its picture is 16000×16000 pixels, more than the limit of 35\.4 megapixels$/);
      const peaks = fs.readFileSync(rssLog, 'utf8').trim().split('\n').map((l) => l.split(' ')).filter((p) => p.length === 2);
      console.log(`      tool runs: ${peaks.map(([tool, kb]) => `${tool} ${Math.round(Number(kb) / 1024)} MB`).join(', ')}`);
      assert.ok(peaks.length > 0, 'the tools ran under the meter');
      for (const [tool, kb] of peaks) assert.ok(Number(kb) < 200 * 1024, `${tool} peaked at ${kb} KB`);
    });
  }
});

describe('what a failure may say: the source\'s problem in our words, never a path, a data: URL never read', function () {
  this.timeout(5 * 60_000);
  let fx: FixturePlatform;
  let server: http.Server;
  let base: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-words-'));
  const storage = new LocalStorage(loadConfig({ DATA_DIR: dir }));
  const config = loadConfig({ ALLOW_PRIVATE_NETWORK: '1' });
  const limits: SourceDeps['config'] = { allowPrivateNetwork: true, maxSourceDurationSeconds: 4 * 3600, maxSourceBytes: 4 * 1024 ** 3, allowLive: false };
  const acts = async () =>
    createSourceActivities({ ytdlp: createYtDlpEngine({ binary: config.ytdlpPath, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath }), ffmpeg: createFfmpegEngine(config), storage, egress: await testEgress(), config: limits });

  before(async () => {
    fx = await startFixturePlatform();
    const segment = fs.readFileSync(path.join(fixtureCacheDir(), 'hls', '480', 'seg0.ts')).toString('base64');
    server = http.createServer((req, res) => {
      const port = (server.address() as AddressInfo).port;
      if (req.url === '/data-segments.m3u8') {
        res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' });
        return void res.end(`#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:2.0,\ndata:video/mp2t;base64,${segment}\n#EXT-X-ENDLIST\n`);
      }
      if (req.url === '/to-bad-host') return void res.writeHead(302, { location: `http://localhost..:${port}/` }).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server?.close();
    await fx?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an HLS playlist whose segments are data: URLs is refused, not read', async () => {
    const input = { jobId: crypto.randomUUID(), url: `${base}/data-segments.m3u8`, quality: 'best' as const, format: null, reads: 'whole' as const, progressRange: [0, 40] as [number, number] };
    await expectNonRetryable(runActivity((await acts()).resolveSource, input), USER_FAILURE_TYPES.rejected, /^The source refers to data: URLs, which are never read \(only http and https are\)$/);
  });

  it('a redirect to a host name no resolver takes ("localhost..") is the user\'s error in our words, not a tool\'s', async () => {
    await expectNonRetryable(runActivity((await acts()).readInfo, `${base}/to-bad-host`), USER_FAILURE_TYPES.rejected, /^The source redirected to an address that is not a valid host name$/);
  });

  it('local paths are taken out of any message, URLs kept', () => {
    assert.equal(withoutInternals('ERROR: file:/srv/data/work/0f3a/download/source.f0.mp4: Invalid data'), 'ERROR: a local file: Invalid data');
    assert.equal(withoutInternals('could not open /tmp/mediasvc-x/work/job/frame.png (denied)'), 'could not open a local file (denied)');
    assert.equal(withoutInternals('HTTP Error 404 at https://cdn.example.com/a/b/c.mp4 and http://h:80/x/y'), 'HTTP Error 404 at https://cdn.example.com/a/b/c.mp4 and http://h:80/x/y');
    assert.equal(withoutInternals('clip_end (9 s) is past the end, which is 4 s / 2 parts'), 'clip_end (9 s) is past the end, which is 4 s / 2 parts');
  });
});

