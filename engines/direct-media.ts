import fs from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { egressRequest } from './egress/http-client';
import { platformGate } from './egress/platform-gate';

/** A direct download that the source refused (an HTTP status) or that went past its size limit; anything else is a plain Error. */
export class DirectMediaError extends Error {
  constructor(
    readonly reason: 'status' | 'too_large',
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'DirectMediaError';
  }
}

const MEDIA_TYPE = /^(audio|video)\/(?!.*(mpegurl|dash|x-mpegurl))/i;

export interface DirectMedia {
  contentType: string;
  length: number | null;
  /** The Last-Modified header, as sent. */
  lastModified: string | null;
}

/**
 * Whether the URL is a plain audio/video file (not a page or a playlist), by a HEAD request that
 * follows no redirects. Such files need no extractor: downloading them directly skips yt-dlp.
 * A refused address is not swallowed: it fails the caller like any other egress refusal.
 */
async function probeDirectMediaNow(url: string, allowPrivate: boolean): Promise<DirectMedia | null> {
  let res;
  try {
    res = await egressRequest({ url, method: 'HEAD', timeoutMs: 15_000, allowPrivate, traffic: 'source' });
  } catch (err) {
    if ((err as { code?: string }).code === 'EGRESS_REFUSED') throw err;
    return null;
  }
  res.resume();
  const type = String(res.headers['content-type'] ?? '');
  if (res.statusCode !== 200 || !MEDIA_TYPE.test(type)) return null;
  const length = Number(res.headers['content-length']);
  const lastModified = res.headers['last-modified'];
  return { contentType: type, length: Number.isFinite(length) ? length : null, lastModified: typeof lastModified === 'string' ? lastModified : null };
}

/**
 * Whether the origin really serves byte ranges of `url` (ffmpeg needs them to seek, above all to
 * reach an index at the end of the file): a 206 for a two-byte range whose Content-Range names
 * that range and the total size. `Accept-Ranges` alone is not trusted: servers that send it and
 * answer 200 with the whole body exist. Redirects are followed (each hop checked again). Null when
 * ranges do not work or the check itself fails; a refused address fails the caller.
 */
async function probeByteRangesNow(
  url: string,
  opts: { allowPrivate: boolean; headers?: Record<string, string>; signal?: AbortSignal },
): Promise<{ url: string; size: number } | null> {
  let target = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let res;
    try {
      res = await egressRequest({ url: target, method: 'GET', headers: { ...opts.headers, Range: 'bytes=0-1' }, timeoutMs: 15_000, allowPrivate: opts.allowPrivate, signal: opts.signal, traffic: 'source' });
    } catch (err) {
      if ((err as { code?: string }).code === 'EGRESS_REFUSED') throw err;
      return null;
    }
    // the body is not read: a server that ignores the range would send the whole file
    res.destroy();
    const location = res.headers.location;
    if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location) {
      target = new URL(location, target).toString();
      if (!/^https?:/i.test(target)) return null;
      continue;
    }
    const m = /^bytes 0-1\/(\d+)$/.exec(String(res.headers['content-range'] ?? '').trim());
    if (res.statusCode !== 206 || !m) return null;
    return { url: target, size: Number(m[1]) };
  }
  return null;
}

const MAX_REDIRECTS = 5;

/**
 * `length` bytes of `url` from `start`, by one range request (no redirects: the URL is the one
 * probeByteRanges ended on). Throws unless the origin answers 206 with exactly that range; reads
 * no more than asked for, whatever the origin sends.
 */
async function readByteRangeNow(url: string, start: number, length: number, opts: { allowPrivate: boolean; headers?: Record<string, string>; signal?: AbortSignal }): Promise<Buffer> {
  const end = start + length - 1;
  const res = await egressRequest({ url, method: 'GET', headers: { ...opts.headers, Range: `bytes=${start}-${end}` }, timeoutMs: 15_000, allowPrivate: opts.allowPrivate, signal: opts.signal, traffic: 'source' });
  // a body that stalls is a failed read, as a response that never comes is
  res.setTimeout(15_000, () => res.destroy(new Error('the origin stopped sending for 15 s')));
  try {
    const m = /^bytes (\d+)-(\d+)\/\d+$/.exec(String(res.headers['content-range'] ?? '').trim());
    if (res.statusCode !== 206 || !m || Number(m[1]) !== start || Number(m[2]) !== end) throw new Error(`the origin did not serve bytes ${start}-${end} (HTTP ${res.statusCode})`);
    const chunks: Buffer[] = [];
    let got = 0;
    for await (const chunk of res as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      got += chunk.length;
      if (got >= length) break;
    }
    if (got < length) throw new Error(`the origin sent ${got} of ${length} bytes`);
    return Buffer.concat(chunks).subarray(0, length);
  } finally {
    res.destroy();
  }
}

/** Streams a direct media file to `dest`, failing past `maxBytes`; reports progress as a 0..1 fraction when the size is known. */
async function downloadDirectMediaNow(
  url: string,
  dest: string,
  opts: { allowPrivate: boolean; maxBytes: number; headers?: Record<string, string>; signal?: AbortSignal; onProgress?: (fraction: number) => void },
): Promise<void> {
  let res = await egressRequest({ url, method: 'GET', headers: opts.headers, timeoutMs: 15_000, allowPrivate: opts.allowPrivate, signal: opts.signal, traffic: 'source' });
  // a platform's file URL may redirect to its CDN; each hop is a new, checked request
  let current = url;
  for (let hop = 0; hop < MAX_REDIRECTS && res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && res.headers.location; hop++) {
    res.resume();
    current = new URL(res.headers.location, current).toString();
    if (!/^https?:/i.test(current)) break;
    res = await egressRequest({ url: current, method: 'GET', headers: opts.headers, timeoutMs: 15_000, allowPrivate: opts.allowPrivate, signal: opts.signal, traffic: 'source' });
  }
  if (res.statusCode !== 200) {
    res.resume();
    throw new DirectMediaError('status', `the source answered HTTP ${res.statusCode}`, res.statusCode);
  }
  const total = Number(res.headers['content-length']);
  let done = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      done += chunk.length;
      if (done > opts.maxBytes) return cb(new DirectMediaError('too_large', `The source is larger than the limit of ${opts.maxBytes} bytes`));
      if (Number.isFinite(total) && total > 0) opts.onProgress?.(done / total);
      cb(null, chunk);
    },
  });
  await pipeline(res, meter, fs.createWriteStream(dest), { signal: opts.signal });
}

// Each fetch holds a turn of its platform (PLATFORM_CONCURRENCY) from its first request to its last byte.

export function probeDirectMedia(url: string, allowPrivate: boolean): Promise<DirectMedia | null> {
  return platformGate().hold(url, () => probeDirectMediaNow(url, allowPrivate));
}

export function probeByteRanges(url: string, opts: { allowPrivate: boolean; headers?: Record<string, string>; signal?: AbortSignal }): Promise<{ url: string; size: number } | null> {
  return platformGate().hold(url, () => probeByteRangesNow(url, opts), opts.signal);
}

export function readByteRange(url: string, start: number, length: number, opts: { allowPrivate: boolean; headers?: Record<string, string>; signal?: AbortSignal }): Promise<Buffer> {
  return platformGate().hold(url, () => readByteRangeNow(url, start, length, opts), opts.signal);
}

export function downloadDirectMedia(
  url: string,
  dest: string,
  opts: { allowPrivate: boolean; maxBytes: number; headers?: Record<string, string>; signal?: AbortSignal; onProgress?: (fraction: number) => void },
): Promise<void> {
  return platformGate().hold(url, () => downloadDirectMediaNow(url, dest, opts), opts.signal);
}
