import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { isPrivateAddress, safeLookup } from '../lib/url-safety';

const MEDIA_TYPE = /^(audio|video)\/(?!.*(mpegurl|dash|x-mpegurl))/i;

export interface DirectMedia {
  contentType: string;
  length: number | null;
}

function requestOnce(url: URL, method: 'HEAD' | 'GET', allowPrivate: boolean, signal?: AbortSignal): Promise<http.IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && net.isIP(host) && isPrivateAddress(host)) return Promise.reject(new Error(`${host} is a private or reserved address`));
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { method, lookup: safeLookup(allowPrivate) as never, signal, timeout: 15_000 }, resolve);
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Whether the URL is a plain audio/video file (not a page or a playlist), by a HEAD request that
 * follows no redirects. Such files need no extractor: downloading them directly skips yt-dlp.
 */
export async function probeDirectMedia(rawUrl: string, allowPrivate: boolean): Promise<DirectMedia | null> {
  const url = new URL(rawUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  try {
    const res = await requestOnce(url, 'HEAD', allowPrivate);
    res.resume();
    const type = String(res.headers['content-type'] ?? '');
    if (res.statusCode !== 200 || !MEDIA_TYPE.test(type)) return null;
    const length = Number(res.headers['content-length']);
    return { contentType: type, length: Number.isFinite(length) ? length : null };
  } catch {
    return null;
  }
}

/** Streams a direct media file to `dest`, failing past `maxBytes`; reports progress as a 0..1 fraction when the size is known. */
export async function downloadDirectMedia(
  rawUrl: string,
  dest: string,
  opts: { allowPrivate: boolean; maxBytes: number; signal?: AbortSignal; onProgress?: (fraction: number) => void },
): Promise<void> {
  const res = await requestOnce(new URL(rawUrl), 'GET', opts.allowPrivate, opts.signal);
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
