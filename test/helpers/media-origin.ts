/**
 * An origin that serves media files the ways real web servers do, chosen per URL
 * (`/{mode}/{type}/{name}`), so one test can run every operation against every kind of origin:
 *
 * - `range`:   honours single byte ranges (206 with Content-Range), Accept-Ranges: bytes;
 * - `norange`: ignores Range and answers 200 with the whole body (Python's http.server, many gateways);
 * - `liar`:    says Accept-Ranges: bytes, yet answers every request 200 with the whole body;
 * - `chunked`: ignores Range, sends no Content-Length (chunked), as dynamic endpoints streaming a file do;
 * - `firstrange`: honours only the first two bytes (bytes=0-1) and ignores every other range.
 *
 * `type` is `right` (the file's media type) or `octet` (application/octet-stream, a wrong but common one).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SPEECH_DIR } from './speech-fixtures';

const run = promisify(execFile);

export const ORIGIN_MODES = ['range', 'norange', 'liar', 'chunked', 'firstrange'] as const;
export type OriginMode = (typeof ORIGIN_MODES)[number];
export type OriginType = 'right' | 'octet';

export interface MediaOrigin {
  url(mode: OriginMode, name: string, type?: OriginType): string;
  /** Requests served, by mode. */
  requests: Map<OriginMode, number>;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.mp4': 'video/mp4', '.m4a': 'audio/mp4', '.webm': 'video/webm', '.wav': 'audio/wav', '.mov': 'video/quicktime', '.mkv': 'video/x-matroska',
  '.avi': 'video/x-msvideo', '.ts': 'video/mp2t', '.mp3': 'audio/mpeg', '.ogg': 'audio/ogg', '.opus': 'audio/ogg', '.flac': 'audio/flac',
  '.wma': 'audio/x-ms-wma', '.m3u8': 'application/vnd.apple.mpegurl',
};

/** Serves the files of `dir` (by base name) in every mode. */
export async function startMediaOrigin(dir: string): Promise<MediaOrigin> {
  const requests = new Map<OriginMode, number>();
  const server = http.createServer((req, res) => {
    const m = /^\/([a-z]+)\/(right|octet)\/([^/?]+)$/.exec((req.url ?? '').split('?')[0]!);
    const mode = m?.[1] as OriginMode | undefined;
    const file = m ? path.join(dir, path.basename(decodeURIComponent(m[3]!))) : '';
    if (!m || !mode || !ORIGIN_MODES.includes(mode) || !fs.existsSync(file)) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found\n');
    requests.set(mode, (requests.get(mode) ?? 0) + 1);
    const size = fs.statSync(file).size;
    const type = m[2] === 'octet' ? 'application/octet-stream' : (TYPES[path.extname(file)] ?? 'application/octet-stream');
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const honoured = range && (mode === 'range' || (mode === 'firstrange' && req.headers.range === 'bytes=0-1'));
    const headers: http.OutgoingHttpHeaders = { 'content-type': type };
    if (mode === 'range' || mode === 'liar' || mode === 'firstrange') headers['accept-ranges'] = 'bytes';
    let start = 0;
    let end = size - 1;
    if (honoured) {
      start = Number(range[1]);
      end = range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
      if (start >= size) return void res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      headers['content-range'] = `bytes ${start}-${end}/${size}`;
    }
    if (mode !== 'chunked') headers['content-length'] = end - start + 1;
    res.writeHead(honoured ? 206 : 200, headers);
    if (req.method === 'HEAD') return void res.end();
    const stream = fs.createReadStream(file, { start, end });
    res.on('close', () => stream.destroy());
    stream.pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (mode, name, type = 'right') => `${base}/${mode}/${type}/${name}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Where a file's `moov` box (the index) lies relative to `mdat` (the media): the layouts this origin serves. */
export function moovLayout(file: string): 'faststart' | 'moov-at-end' {
  const buf = fs.readFileSync(file);
  let off = 0;
  const order: string[] = [];
  while (off + 8 <= buf.length) {
    let size = buf.readUInt32BE(off);
    const kind = buf.toString('latin1', off + 4, off + 8);
    if (size === 1) size = Number(buf.readBigUInt64BE(off + 8));
    order.push(kind);
    if (size < 8) break;
    off += size;
  }
  return order.indexOf('moov') < order.indexOf('mdat') ? 'faststart' : 'moov-at-end';
}

/**
 * The origin's files, made once into a cache folder: an 11 s speech recording (the shared jfk.wav,
 * read in place) under a test picture, as `speech-tail.mp4` (index last, the mp4 muxer's default, as
 * cameras and ffmpeg write it) and `speech-fast.mp4` (the same streams, index first), and
 * `speech-cut.mp4`: the first half of the first, cut short before its index.
 */
export async function originMedia(): Promise<string> {
  const dir = path.join(os.tmpdir(), 'mediasvc-origin-media-v1');
  fs.mkdirSync(dir, { recursive: true });
  const tail = path.join(dir, 'speech-tail.mp4');
  const fast = path.join(dir, 'speech-fast.mp4');
  const make = async (file: string, args: string[]) => {
    if (fs.existsSync(file)) return;
    const tmp = path.join(dir, `.${process.pid}-${path.basename(file)}`);
    await run('ffmpeg', ['-v', 'error', '-y', ...args, tmp]);
    fs.renameSync(tmp, file);
  };
  await make(tail, ['-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25', '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-map', '0:v', '-map', '1:a', '-shortest', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '96k']);
  await make(fast, ['-i', tail, '-c', 'copy', '-movflags', '+faststart']);
  const cut = path.join(dir, 'speech-cut.mp4');
  if (!fs.existsSync(cut)) {
    // written whole or not at all: another test process may be serving it
    const bytes = fs.readFileSync(tail);
    const tmp = path.join(dir, `.${process.pid}-speech-cut.mp4`);
    fs.writeFileSync(tmp, bytes.subarray(0, Math.floor(bytes.length / 2)));
    fs.renameSync(tmp, cut);
  }
  assert.equal(moovLayout(tail), 'moov-at-end');
  assert.equal(moovLayout(fast), 'faststart');
  return dir;
}
