/**
 * A local HTTP "video platform" for tests that run the real yt-dlp / ffmpeg.
 *
 * All media is generated with the system ffmpeg (lavfi testsrc2 + sine sources),
 * once, into a cache directory that is reused across runs. Pages are plain HTML
 * built so that yt-dlp's *generic* extractor understands them (Open Graph,
 * JSON-LD VideoObject, HTML5 <video>).
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface FixturePlatform {
  baseUrl: string; // e.g. http://127.0.0.1:43123 (ephemeral port on 127.0.0.1)
  url(path: string): string; // baseUrl + path
  /** Number of requests served per path, for assertions. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export const FIXTURE = {
  // known facts tests assert on
  videoHeights: [1080, 720, 480] as const,
  durationSeconds: 4,
  /** Audio sources for processing tests (AAC in .m4a, stereo 44.1 kHz). */
  audio: {
    /** 6 s tone at about -30 LUFS. */
    quiet: '/media/quiet.m4a',
    /** 6 s tone at about -8 LUFS. */
    loud: '/media/loud.m4a',
    /** 9 s: 2 s silence, 2 s tone, 1 s silence, 2 s tone, 2 s silence. */
    gaps: '/media/gaps.m4a',
    /** 6 s of constant white noise (about -40 dBFS), with a tone from 2 s on. */
    noisy: '/media/noisy.m4a',
  },
  /** A 4 s video with other content than the test pattern (a Mandelbrot zoom), 640x360. */
  otherVideo: '/media/other.mp4',
  page: {
    title: 'Fixture Trailer',
    description: 'A generated test pattern with a tone.',
    uploadDate: '2024-03-15',
    duration: 4,
    thumbnailPath: '/media/thumb.jpg',
  },
};

type Height = (typeof FIXTURE.videoHeights)[number];

const VIDEO_SIZES: Record<Height, { width: number; height: number; kbps: number; level: string; codecs: string }> = {
  // Constrained baseline (ultrafast + -profile:v baseline) => avc1.42C0xx; level in hex.
  1080: { width: 1920, height: 1080, kbps: 1200, level: '4.0', codecs: 'avc1.42c028,mp4a.40.2' },
  720: { width: 1280, height: 720, kbps: 700, level: '3.1', codecs: 'avc1.42c01f,mp4a.40.2' },
  480: { width: 854, height: 480, kbps: 400, level: '3.0', codecs: 'avc1.42c01e,mp4a.40.2' },
};

const DURATION = String(FIXTURE.durationSeconds);
const FPS = 25;
const HLS_SEGMENT_SECONDS = 2;

const CONTENT_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.m4a': 'audio/mp4',
  '.mp3': 'audio/mpeg',
  '.webm': 'video/webm',
  '.jpg': 'image/jpeg',
  '.m3u8': 'application/vnd.apple.mpegurl',
  '.ts': 'video/mp2t',
  '.mkv': 'video/x-matroska',
  '.vtt': 'text/vtt',
  '.srt': 'application/x-subrip',
};

function ffmpegBin(): string {
  return process.env.FFMPEG_PATH || 'ffmpeg';
}

async function ffmpeg(args: string[], cwd?: string): Promise<void> {
  await execFileAsync(ffmpegBin(), ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args], {
    cwd,
    maxBuffer: 16 * 1024 * 1024,
  });
}

function videoSource(width: number, height: number): string[] {
  return ['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=${FPS}:duration=${DURATION}`];
}

function audioSource(): string[] {
  return ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${DURATION}`];
}

function tmpName(target: string): string {
  const dir = path.dirname(target);
  const base = path.basename(target);
  const ext = path.extname(base);
  // Keep the real extension last so ffmpeg picks the right muxer.
  return path.join(dir, `.${base}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}${ext}`);
}

async function fileReady(file: string): Promise<boolean> {
  try {
    const st = await fsp.stat(file);
    return st.isFile() && st.size > 0;
  } catch {
    return false;
  }
}

/** Produces `target` via `make(tmpPath)` unless it already exists; atomic via rename. */
async function ensureFile(target: string, make: (tmp: string) => Promise<void>): Promise<void> {
  if (await fileReady(target)) return;
  const tmp = tmpName(target);
  try {
    await make(tmp);
    await fsp.rename(tmp, target);
  } finally {
    await fsp.rm(tmp, { force: true });
  }
}

function mp4Args(h: Height, out: string): string[] {
  const { width, height, kbps, level } = VIDEO_SIZES[h];
  return [
    ...videoSource(width, height),
    ...audioSource(),
    '-map', '0:v:0', '-map', '1:a:0',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-profile:v', 'baseline', '-level:v', level,
    '-pix_fmt', 'yuv420p', '-b:v', `${kbps}k`, '-maxrate', `${kbps}k`, '-bufsize', `${kbps * 2}k`,
    // A keyframe every HLS segment length so the HLS remux cuts cleanly.
    '-g', String(FPS * HLS_SEGMENT_SECONDS), '-keyint_min', String(FPS * HLS_SEGMENT_SECONDS), '-sc_threshold', '0',
    '-c:a', 'aac', '-b:a', '64k', '-ar', '44100', '-ac', '2',
    '-t', DURATION, '-movflags', '+faststart',
    '-f', 'mp4', out,
  ];
}

/** HLS variant dir `hls/{h}` (index.m3u8 + segN.ts), remuxed from the matching MP4. */
async function ensureHlsVariant(cacheDir: string, h: Height): Promise<void> {
  const finalDir = path.join(cacheDir, 'hls', String(h));
  if (await fileReady(path.join(finalDir, 'index.m3u8'))) return;
  await fsp.mkdir(path.dirname(finalDir), { recursive: true });
  const tmpDir = `${finalDir}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  await fsp.mkdir(tmpDir, { recursive: true });
  try {
    await ffmpeg(
      [
        '-i', path.join(cacheDir, 'media', `v${h}.mp4`),
        '-map', '0', '-c', 'copy',
        '-f', 'hls', '-hls_time', String(HLS_SEGMENT_SECONDS), '-hls_playlist_type', 'vod',
        '-hls_segment_type', 'mpegts', '-hls_segment_filename', 'seg%d.ts',
        'index.m3u8',
      ],
      tmpDir,
    );
    try {
      await fsp.rename(tmpDir, finalDir);
    } catch (err) {
      // Another process may have won the race; accept its complete copy.
      if (!(await fileReady(path.join(finalDir, 'index.m3u8')))) throw err;
    }
  } finally {
    await fsp.rm(tmpDir, { recursive: true, force: true });
  }
}

async function generateMedia(cacheDir: string): Promise<void> {
  const media = path.join(cacheDir, 'media');
  await fsp.mkdir(media, { recursive: true });

  const jobs: Array<() => Promise<void>> = [
    ...FIXTURE.videoHeights.map((h) => async () => {
      await ensureFile(path.join(media, `v${h}.mp4`), (tmp) => ffmpeg(mp4Args(h, tmp)));
      await ensureHlsVariant(cacheDir, h);
    }),
    () =>
      ensureFile(path.join(media, 'audio.m4a'), (tmp) =>
        ffmpeg([...audioSource(), '-c:a', 'aac', '-b:a', '64k', '-ar', '44100', '-ac', '2', '-t', DURATION, '-movflags', '+faststart', '-f', 'ipod', tmp]),
      ),
    () =>
      ensureFile(path.join(media, 'audio.mp3'), (tmp) =>
        ffmpeg([...audioSource(), '-c:a', 'libmp3lame', '-b:a', '64k', '-ar', '44100', '-ac', '2', '-t', DURATION, '-f', 'mp3', tmp]),
      ),
    () =>
      ensureFile(path.join(media, 'clip.webm'), (tmp) =>
        ffmpeg([
          ...videoSource(640, 360),
          '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${DURATION}`,
          '-map', '0:v:0', '-map', '1:a:0',
          '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '300k', '-pix_fmt', 'yuv420p',
          '-c:a', 'libopus', '-b:a', '48k',
          '-t', DURATION, '-f', 'webm', tmp,
        ]),
      ),
    ...(
      [
        ['quiet.m4a', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=6', '-af', 'volume=-8.2dB']],
        ['loud.m4a', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=6', '-af', 'volume=13.8dB']],
        ['gaps.m4a', ['-f', 'lavfi', '-i', "aevalsrc='if(between(t,2,4)+between(t,5,7),0.5*sin(2*PI*440*t),0)':s=44100:d=9"]],
        [
          'noisy.m4a',
          [
            '-f', 'lavfi', '-i', "aevalsrc='if(gte(t,2),0.3*sin(2*PI*440*t),0)':s=44100:d=6",
            '-f', 'lavfi', '-i', 'anoisesrc=color=white:amplitude=0.02:seed=42:sample_rate=44100:duration=6',
            '-filter_complex', '[0:a][1:a]amix=inputs=2:normalize=0',
          ],
        ],
      ] as const
    ).map(
      ([name, input]) =>
        () =>
          ensureFile(path.join(media, name), (tmp) =>
            ffmpeg([...input, '-c:a', 'aac', '-b:a', '128k', '-ar', '44100', '-ac', '2', '-movflags', '+faststart', '-f', 'ipod', tmp]),
          ),
    ),
    () =>
      ensureFile(path.join(media, 'other.mp4'), (tmp) =>
        ffmpeg([
          '-f', 'lavfi', '-i', `mandelbrot=size=640x360:rate=${FPS}`, ...audioSource(),
          '-map', '0:v:0', '-map', '1:a:0', '-t', DURATION,
          '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k', '-movflags', '+faststart', '-f', 'mp4', tmp,
        ]),
      ),
    () =>
      ensureFile(path.join(media, 'thumb.jpg'), (tmp) =>
        ffmpeg(['-f', 'lavfi', '-i', `testsrc2=size=320x180:rate=${FPS}:duration=1`, '-frames:v', '1', '-q:v', '4', '-f', 'image2', '-c:v', 'mjpeg', tmp]),
      ),
  ];

  // Two at a time: ffmpeg/x264 is multi-threaded already; CI boxes have ~2 cores.
  const queue = [...jobs];
  const worker = async (): Promise<void> => {
    for (let job = queue.shift(); job; job = queue.shift()) await job();
  };
  await Promise.all([worker(), worker()]);
}

const generations = new Map<string, Promise<void>>();

/** The fixture media in the cache, made once (a fresh machine has none). */
export function ensureMedia(cacheDir: string): Promise<void> {
  let p = generations.get(cacheDir);
  if (!p) {
    p = generateMedia(cacheDir);
    generations.set(cacheDir, p);
    // Let a later call retry after a failure.
    p.catch(() => generations.delete(cacheDir));
  }
  return p;
}

async function buildMasterPlaylist(cacheDir: string): Promise<string> {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const h of FIXTURE.videoHeights) {
    const dir = path.join(cacheDir, 'hls', String(h));
    let bytes = 0;
    for (const name of await fsp.readdir(dir)) {
      if (name.endsWith('.ts')) bytes += (await fsp.stat(path.join(dir, name))).size;
    }
    const bandwidth = Math.max(100_000, Math.ceil((bytes * 8) / FIXTURE.durationSeconds / 1000) * 1000);
    const { width, height, codecs } = VIDEO_SIZES[h];
    lines.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${bandwidth},AVERAGE-BANDWIDTH=${bandwidth},RESOLUTION=${width}x${height},FRAME-RATE=${FPS}.000,CODECS="${codecs}"`,
      `${h}/index.m3u8`,
    );
  }
  return lines.join('\n') + '\n';
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function trailerPage(baseUrl: string): string {
  const p = FIXTURE.page;
  const videoUrl = `${baseUrl}/media/v720.mp4`;
  const thumbUrl = `${baseUrl}${p.thumbnailPath}`;
  const { width, height } = VIDEO_SIZES[720];
  const jsonLd = {
    '@context': 'https://schema.org',
    '@type': 'VideoObject',
    name: p.title,
    description: p.description,
    duration: `PT${p.duration}S`,
    thumbnailUrl: thumbUrl,
    uploadDate: p.uploadDate,
    contentUrl: videoUrl,
    width,
    height,
  };
  // `<` escaped so the JSON can never close the script element.
  const ld = JSON.stringify(jsonLd).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(p.title)}</title>
<meta name="description" content="${escapeHtml(p.description)}">
<meta property="og:type" content="video.other">
<meta property="og:title" content="${escapeHtml(p.title)}">
<meta property="og:description" content="${escapeHtml(p.description)}">
<meta property="og:image" content="${escapeHtml(thumbUrl)}">
<meta property="og:video" content="${escapeHtml(videoUrl)}">
<meta property="og:video:type" content="video/mp4">
<meta property="og:video:width" content="${width}">
<meta property="og:video:height" content="${height}">
<script type="application/ld+json">${ld}</script>
</head>
<body>
<h1>${escapeHtml(p.title)}</h1>
<p>${escapeHtml(p.description)}</p>
</body>
</html>
`;
}

/**
 * A page that names its one video twice in Open Graph (relative and absolute) and in JSON-LD only by
 * embedUrl, without a duration anywhere: yt-dlp's generic extractor reads it as two numbered copies.
 */
function ogTwicePage(baseUrl: string): string {
  const p = FIXTURE.page;
  const ld = JSON.stringify({ '@context': 'https://schema.org', '@type': 'VideoObject', name: p.title, embedUrl: `${baseUrl}/media/v480.mp4` });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(p.title)}</title>
<meta property="og:title" content="${escapeHtml(p.title)}">
<meta property="og:video" content="/media/v480.mp4">
<meta property="og:video" content="${escapeHtml(baseUrl)}/media/v480.mp4">
<meta property="og:video:type" content="video/mp4">
<script type="application/ld+json">${ld.replace(/</g, '\\u003c')}</script>
</head>
<body><h1>${escapeHtml(p.title)}</h1></body>
</html>
`;
}

/** One video seen three ways, none with a duration: og:video, a JSON-LD VideoObject's contentUrl and a <video> element. */
function twoViewsPage(baseUrl: string): string {
  const p = FIXTURE.page;
  const ld = JSON.stringify({ '@context': 'https://schema.org', '@type': 'VideoObject', name: p.title, contentUrl: `${baseUrl}/media/v480.mp4`, uploadDate: p.uploadDate });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(p.title)}</title>
<meta property="og:title" content="${escapeHtml(p.title)}">
<meta property="og:video" content="${escapeHtml(baseUrl)}/media/v480.mp4">
<meta property="og:video:type" content="video/mp4">
<script type="application/ld+json">${ld.replace(/</g, '\\u003c')}</script>
</head>
<body><h1>${escapeHtml(p.title)}</h1><video src="/media/v480.mp4" controls></video></body>
</html>
`;
}

function html5Page(): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>HTML5 Fixture Video</title>
</head>
<body>
<h1>HTML5 Fixture Video</h1>
<video controls width="854" height="480">
<source src="/media/v480.mp4" type="video/mp4" label="480p" res="480">
</video>
</body>
</html>
`;
}

function noMediaPage(): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Nothing to see here</title>
</head>
<body>
<h1>Nothing to see here</h1>
<p>This page is plain text. It has no video or audio of any kind.</p>
</body>
</html>
`;
}

/** Maps a request path to a file inside the cache dir, or null. */
function resolveFile(cacheDir: string, pathname: string): string | null {
  const media = /^\/media\/(v1080\.mp4|v720\.mp4|v480\.mp4|audio\.m4a|audio\.mp3|clip\.webm|thumb\.jpg|quiet\.m4a|loud\.m4a|gaps\.m4a|noisy\.m4a|other\.mp4)$/.exec(pathname);
  if (media?.[1]) return path.join(cacheDir, 'media', media[1]);
  const hls = /^\/hls\/(1080|720|480)\/(index\.m3u8|seg\d+\.ts)$/.exec(pathname);
  if (hls?.[1] && hls[2]) return path.join(cacheDir, 'hls', hls[1], hls[2]);
  return null;
}

type ByteRange = { start: number; end: number } | 'unsatisfiable' | null;

/** Parses a single-range `Range` header; null means "serve the whole thing". */
function parseRange(header: string | undefined, size: number): ByteRange {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return null; // multi-range or garbage: ignore, send 200
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return null;
  let start: number;
  let end: number;
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

function sendBody(req: http.IncomingMessage, res: http.ServerResponse, status: number, type: string, body: string | Buffer): void {
  const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': buf.length, 'Cache-Control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : buf);
}

function sendBuffer(req: http.IncomingMessage, res: http.ServerResponse, type: string, buf: Buffer): void {
  const range = parseRange(req.headers.range, buf.length);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { 'Content-Range': `bytes */${buf.length}`, 'Content-Length': 0 });
    res.end();
    return;
  }
  const headers: http.OutgoingHttpHeaders = { 'Content-Type': type, 'Accept-Ranges': 'bytes' };
  if (range) {
    headers['Content-Range'] = `bytes ${range.start}-${range.end}/${buf.length}`;
    headers['Content-Length'] = range.end - range.start + 1;
    res.writeHead(206, headers);
    res.end(req.method === 'HEAD' ? undefined : buf.subarray(range.start, range.end + 1));
  } else {
    headers['Content-Length'] = buf.length;
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : buf);
  }
}

/** Serves a file as a media origin does: its type by extension, one byte range honoured (206), HEAD answered. */
export async function sendFile(req: http.IncomingMessage, res: http.ServerResponse, file: string): Promise<void> {
  let size: number;
  try {
    size = (await fsp.stat(file)).size;
  } catch {
    sendBody(req, res, 404, 'text/plain; charset=utf-8', 'Not Found\n');
    return;
  }
  const type = CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream';
  const range = parseRange(req.headers.range, size);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { 'Content-Range': `bytes */${size}`, 'Content-Length': 0 });
    res.end();
    return;
  }
  const start = range ? range.start : 0;
  const end = range ? range.end : size - 1;
  const headers: http.OutgoingHttpHeaders = {
    'Content-Type': type,
    'Content-Length': size === 0 ? 0 : end - start + 1,
    'Accept-Ranges': 'bytes',
  };
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD' || size === 0) {
    res.end();
    return;
  }
  const stream = fs.createReadStream(file, { start, end });
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

export interface FixturePlatformOptions {
  cacheDir?: string;
  /** Address to listen on (default 127.0.0.1) and port (default: any free one). */
  host?: string;
  port?: number;
  /** The base URL pages link to, e.g. http://public.test when a hosts file names the address. */
  baseUrl?: string;
  /** Extra routes, tried first; true when the route answered. */
  extraRoutes?: (req: http.IncomingMessage, res: http.ServerResponse, pathname: string) => boolean;
}

/** Where the generated media live (for tests that build further fixtures from them). */
export function fixtureCacheDir(cacheDir?: string): string {
  return path.resolve(cacheDir ?? path.join(os.tmpdir(), 'mediasvc-fixtures-v1'));
}

export async function startFixturePlatform(opts?: FixturePlatformOptions): Promise<FixturePlatform> {
  const cacheDir = fixtureCacheDir(opts?.cacheDir);
  await ensureMedia(cacheDir);
  const master = Buffer.from(await buildMasterPlaylist(cacheDir), 'utf8');

  const hits = new Map<string, number>();
  let baseUrl = '';

  const server = http.createServer((req, res) => {
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://fixture.invalid').pathname;
    } catch {
      pathname = req.url ?? '/';
    }
    hits.set(pathname, (hits.get(pathname) ?? 0) + 1);
    if (opts?.extraRoutes?.(req, res, pathname)) return;

    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      sendBody(req, res, 405, 'text/plain; charset=utf-8', 'Method Not Allowed\n');
      return;
    }

    const html = 'text/html; charset=utf-8';
    switch (pathname) {
      case '/watch/trailer':
        sendBody(req, res, 200, html, trailerPage(baseUrl));
        return;
      case '/watch/og-twice':
        sendBody(req, res, 200, html, ogTwicePage(baseUrl));
        return;
      case '/watch/two-views':
        sendBody(req, res, 200, html, twoViewsPage(baseUrl));
        return;
      case '/watch/html5':
        sendBody(req, res, 200, html, html5Page());
        return;
      case '/watch/nomedia':
        sendBody(req, res, 200, html, noMediaPage());
        return;
      case '/hls/master.m3u8':
        sendBuffer(req, res, CONTENT_TYPES['.m3u8'] ?? 'application/vnd.apple.mpegurl', master);
        return;
      default: {
        const file = resolveFile(cacheDir, pathname);
        if (file) {
          sendFile(req, res, file).catch(() => res.destroy());
          return;
        }
        sendBody(req, res, 404, 'text/plain; charset=utf-8', 'Not Found\n');
      }
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts?.port ?? 0, opts?.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  baseUrl = opts?.baseUrl ?? `http://127.0.0.1:${port}`;

  let closed: Promise<void> | undefined;
  return {
    baseUrl,
    url: (p: string) => baseUrl + p,
    hits,
    close: () => {
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/**
 * Serves a whole file as a plain 200 whatever the request's Range (no Accept-Ranges): an origin that
 * ignores Range, as many do, after `firstByteMs` of silence (a slow one, headers included).
 */
export function serveIgnoringRange(req: http.IncomingMessage, res: http.ServerResponse, file: string, firstByteMs = 0): void {
  const timer = setTimeout(() => {
    const buf = fs.readFileSync(file);
    res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': buf.length });
    res.end(req.method === 'HEAD' ? undefined : buf);
  }, firstByteMs);
  res.on('close', () => clearTimeout(timer));
}

/**
 * Serves a file at `bytesPerSecond`: a slow origin. Without `req` it ignores Range (200, the whole
 * body); with it, a single byte range is honoured (206, as a paced CDN answers seek reads).
 */
export function serveThrottled(res: http.ServerResponse, file: string, bytesPerSecond: number, req?: http.IncomingMessage): void {
  const buf = fs.readFileSync(file);
  const m = req ? /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '') : null;
  const start = m ? Number(m[1]) : 0;
  const end = m?.[2] ? Math.min(Number(m[2]), buf.length - 1) : buf.length - 1;
  if (start >= buf.length) return void res.writeHead(416, { 'Content-Range': `bytes */${buf.length}` }).end();
  res.writeHead(m ? 206 : 200, {
    'Content-Type': 'video/mp4',
    'Content-Length': end - start + 1,
    ...(req ? { 'Accept-Ranges': 'bytes' } : {}),
    ...(m ? { 'Content-Range': `bytes ${start}-${end}/${buf.length}` } : {}),
  });
  if (req?.method === 'HEAD') return void res.end();
  let off = start;
  const tick = setInterval(() => {
    if (res.destroyed || off > end) {
      clearInterval(tick);
      res.end();
      return;
    }
    const next = Math.min(off + bytesPerSecond / 10, end + 1);
    res.write(buf.subarray(off, next));
    off = next;
  }, 100);
  res.on('close', () => clearInterval(tick));
}
