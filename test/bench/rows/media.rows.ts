// Media rows of the bench: each media job end to end (created → completed, through the API
// of a running `serve`) next to the bare tool on the same input, fetched from the same local origin.
// The origin counts the bytes it sends, so each row also shows bytes fetched by the job and the tool.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../../lib/config';
import type { ServeStack } from '../../helpers/serve-stack';

const run = promisify(execFile);

/** A row's measurement: one product run and one bare run, each in seconds, with bytes fetched. */
export interface MediaRow {
  name: string;
  /** The job, end to end: created_at → completed_at. */
  product(stack: ServeStack): Promise<number>;
  /** The bare command(s) a user would run for the same output; with `proxyUrl`, every fetch through that HTTP proxy. */
  bare(proxyUrl?: string): Promise<number>;
  /** The goal ratio (product / bare) of the row. */
  goal: number;
}

/** Test sources: testsrc2 at 25 fps with a tone, H.264 (2 s GOP) + AAC, faststart mp4, cached across runs. */
async function source(dir: string, seconds: number, height: number): Promise<string> {
  const file = path.join(dir, `src${seconds}s-${height}p.mp4`);
  if (fs.existsSync(file)) return file;
  const tmp = `${file}.tmp.mp4`;
  const width = Math.round((height * 16) / 9 / 2) * 2;
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=25:duration=${seconds}`, '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '96k', '-movflags', '+faststart', tmp]);
  fs.renameSync(tmp, file);
  return file;
}

/**
 * A static origin with Range support that counts the bytes it sends. With `bytesPerSecond` it paces
 * its answers like a real link: over loopback, socket buffers would otherwise take megabytes more
 * than a client reads before it hangs up, and the count would measure the buffers, not the reads.
 */
export interface Origin {
  url(name: string): string;
  bytes: number;
  close(): Promise<void>;
}

export async function startOrigin(dir: string, opts: { bytesPerSecond?: number } = {}): Promise<Origin> {
  const state = { bytes: 0 };
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(decodeURIComponent((req.url ?? '/').split('?')[0]!)));
    if (!file.endsWith('.mp4') || !fs.existsSync(file)) return void res.writeHead(404).end();
    const size = fs.statSync(file).size;
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m && m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    if (start >= size) return void res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
    const headers = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', 'content-length': end - start + 1 };
    res.writeHead(m ? 206 : 200, m ? { ...headers, 'content-range': `bytes ${start}-${end}/${size}` } : headers);
    if (req.method === 'HEAD') return void res.end();
    // it stands in for a remote server, so it takes as little of the machine as it can: 1 MB reads
    // (at 16 KB, serving an hour's 266 MB took a second of CPU the jobs and bare commands lacked);
    // 16 KB when throttled, so the rate is kept smoothly
    const chunk = opts.bytesPerSecond ? 16 * 1024 : 1024 * 1024;
    const stream = fs.createReadStream(file, { start, end, highWaterMark: chunk });
    res.on('close', () => stream.destroy());
    if (!opts.bytesPerSecond) {
      stream.on('data', (c) => (state.bytes += c.length));
      stream.pipe(res);
      return;
    }
    const rate = opts.bytesPerSecond;
    const started = performance.now();
    let sent = 0;
    stream.on('data', (c) => {
      stream.pause();
      // wait until this chunk fits the rate, then send it
      const due = started + ((sent + c.length) / rate) * 1000 - performance.now();
      setTimeout(() => {
        if (res.destroyed) return;
        sent += c.length;
        state.bytes += c.length;
        if (res.write(c)) stream.resume();
        else res.once('drain', () => stream.resume());
      }, Math.max(0, due));
    });
    stream.on('end', () => setTimeout(() => res.end(), Math.max(0, started + (sent / rate) * 1000 - performance.now())));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    get bytes() {
      return state.bytes;
    },
    set bytes(v: number) {
      state.bytes = v;
    },
    close: () => new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

const HASHES = `
import sys, imagehash
from PIL import Image
im = Image.open(sys.argv[1])
print(imagehash.average_hash(im, 16), imagehash.phash(im, 16), imagehash.dhash(im, 16))
`;

/** The media rows over sources in `cacheDir`, served by `origin`. */
export async function mediaRows(cacheDir: string, origin: Origin): Promise<MediaRow[]> {
  fs.mkdirSync(cacheDir, { recursive: true });
  const short = path.basename(await source(cacheDir, 10, 720));
  const long = path.basename(await source(cacheDir, 60, 720));
  const config = loadConfig();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-media-out-'));
  const ff = (args: string[]) => run('ffmpeg', ['-v', 'error', '-y', ...args], { maxBuffer: 64 * 1024 * 1024 });
  const timed = async (step: () => Promise<unknown>) => {
    const t0 = performance.now();
    await step();
    return (performance.now() - t0) / 1000;
  };
  const job = async (stack: ServeStack, p: string, body: unknown) => {
    const created = await stack.api('POST', p, body);
    if (created.status !== 202 && created.status !== 200 && created.status !== 201) throw new Error(`${p}: ${created.status} ${JSON.stringify(created.body)}`);
    const done = await stack.waitJob(created.body.job_id as string, 600_000);
    if (done.status !== 'completed') throw new Error(`${p} failed: ${done.error_message}`);
    const j = done as unknown as { created_at: string; completed_at: string };
    return (Date.parse(j.completed_at) - Date.parse(j.created_at)) / 1000;
  };
  /** ffmpeg's option sending its http input through the proxy (before `-i`). */
  const via = (proxyUrl?: string) => (proxyUrl ? ['-http_proxy', proxyUrl] : []);
  const fingerprintBare = async (i: number, proxyUrl?: string) => {
    const png = path.join(tmp, `frame${i}.png`);
    await ff([...via(proxyUrl), '-ss', '2.5', '-i', origin.url(short), '-frames:v', '1', '-pix_fmt', 'rgb24', png]);
    await run(config.whisperPython, ['-c', HASHES, png]);
  };
  return [
    {
      name: 'Fingerprint, 10 s 720p clip',
      goal: 1.5,
      product: (s) => job(s, '/v1/fingerprint', { url: origin.url(short) }),
      bare: (proxy) => timed(() => fingerprintBare(0, proxy)),
    },
    {
      name: 'Thumbnail, 10 s 720p clip',
      goal: 1.5,
      product: (s) => job(s, '/v1/preview', { url: origin.url(short), preview_type: 'thumbnail', width: 320 }),
      bare: (proxy) => timed(() => ff([...via(proxy), '-ss', '2.5', '-i', origin.url(short), '-frames:v', '1', '-vf', 'scale=320:-1:flags=lanczos', '-q:v', '2', path.join(tmp, 't.jpg')])),
    },
    {
      name: 'GIF 5 s, w480, fps 10, of a 60 s 720p source',
      goal: 1.3,
      product: (s) => job(s, '/v1/preview', { url: origin.url(long), preview_type: 'gif', start: '00:00:20', duration: 5, width: 480, fps: 10 }),
      bare: (proxy) => timed(() => ff([...via(proxy), '-ss', '20', '-t', '5', '-i', origin.url(long), '-filter_complex', '[0:v:0]fps=10,scale=480:-1:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[pal];[b][pal]paletteuse=dither=bayer:bayer_scale=5', '-loop', '0', path.join(tmp, 'g.gif')])),
    },
    {
      name: 'Mosaic 4x4, w640, of a 60 s 720p source',
      goal: 1.3,
      product: (s) => job(s, '/v1/preview', { url: origin.url(long), preview_type: 'mosaic', columns: 4, rows: 4, width: 640 }),
      bare: (proxy) => timed(() => ff([...via(proxy), '-i', origin.url(long), '-vf', 'fps=16/60,scale=160:-1:flags=lanczos,tile=4x4', '-frames:v', '1', '-q:v', '2', path.join(tmp, 'm.jpg')])),
    },
    {
      name: 'Storyboard of a 60 s 720p source (60 tiles of 160 px: sprite, WebVTT, JSON)',
      goal: 1.3,
      product: (s) => job(s, '/v1/preview', { url: origin.url(long), preview_type: 'storyboard' }),
      bare: (proxy) => timed(() => ff([...via(proxy), '-i', origin.url(long), '-vf', 'fps=1,scale=160:-2:flags=lanczos,tile=10x6', '-frames:v', '1', '-q:v', '4', path.join(tmp, 's.jpg')])),
    },
    {
      name: 'Clip 10 s, w640, of a 60 s 720p source',
      goal: 1.3,
      product: (s) => job(s, '/v1/preview', { url: origin.url(long), preview_type: 'clip', start: '00:00:20', duration: 10, width: 640 }),
      bare: (proxy) => timed(() => ff([...via(proxy), '-ss', '20', '-t', '10', '-i', origin.url(long), '-vf', 'scale=640:-2:flags=lanczos', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart', path.join(tmp, 'c.mp4')])),
    },
    {
      name: 'Download 60 s 720p as mp4',
      goal: 1.3,
      product: (s) => job(s, '/v1/download', { url: origin.url(long), format: 'mp4' }),
      bare: (proxy) => timed(async () => {
        fs.rmSync(path.join(tmp, 'dl.mp4'), { force: true });
        await run(config.ytdlpPath, ['--ignore-config', '--no-cache-dir', '-q', ...(proxy ? ['--proxy', proxy] : []), '-o', path.join(tmp, 'dl.mp4'), origin.url(long)]);
      }),
    },
    {
      name: '40 fingerprint jobs at once (bare: 2 at a time)',
      goal: 1.3,
      product: async (s) => {
        const t0 = performance.now();
        await Promise.all(Array.from({ length: 40 }, () => job(s, '/v1/fingerprint', { url: origin.url(short) })));
        return (performance.now() - t0) / 1000;
      },
      bare: (proxy) => timed(async () => {
        let next = 0;
        const lane = async () => {
          while (next < 40) await fingerprintBare(next++, proxy);
        };
        await Promise.all([lane(), lane()]);
      }),
    },
  ];
}
