import fs from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { egressRequest } from './egress/http-client';

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
export async function probeDirectMedia(url: string, allowPrivate: boolean): Promise<DirectMedia | null> {
  let res;
  try {
    res = await egressRequest({ url, method: 'HEAD', timeoutMs: 15_000, allowPrivate });
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

/** Streams a direct media file to `dest`, failing past `maxBytes`; reports progress as a 0..1 fraction when the size is known. */
export async function downloadDirectMedia(
  url: string,
  dest: string,
  opts: { allowPrivate: boolean; maxBytes: number; signal?: AbortSignal; onProgress?: (fraction: number) => void },
): Promise<void> {
  const res = await egressRequest({ url, method: 'GET', timeoutMs: 15_000, allowPrivate: opts.allowPrivate, signal: opts.signal });
  if (res.statusCode !== 200) {
    res.resume();
    throw new Error(`the source answered HTTP ${res.statusCode}`);
  }
  const total = Number(res.headers['content-length']);
  let done = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      done += chunk.length;
      if (done > opts.maxBytes) return cb(new Error(`The source is larger than the limit of ${opts.maxBytes} bytes`));
      if (Number.isFinite(total) && total > 0) opts.onProgress?.(done / total);
      cb(null, chunk);
    },
  });
  await pipeline(res, meter, fs.createWriteStream(dest), { signal: opts.signal });
}
