// Node-side outbound HTTP for users' URLs (direct media, PeerTube, webhooks): every connection goes
// through resolveAllowed, literals and names alike, and redirects are never followed here (callers
// that follow them make a new request, which is checked again).
import http from 'node:http';
import https from 'node:https';
import { urlHost } from '../../lib/address-policy';
import { guardedLookup, resolveAllowed } from './address-check';

export interface EgressRequest {
  url: string;
  method: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** No answer (headers) within this long fails the request. */
  timeoutMs: number;
  signal?: AbortSignal;
  allowPrivate: boolean;
}

/** Sends one request; resolves with the response (unread), rejects with EgressRefusedError or a network error. */
export async function egressRequest(req: EgressRequest): Promise<http.IncomingMessage> {
  const url = new URL(req.url);
  const mod = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
  if (!mod) throw new Error(`${url.protocol} URLs are not fetched`);
  // Node does not call `lookup` for IP literals: check those here, names at connect time.
  const { host, literal } = urlHost(req.url);
  if (literal) await resolveAllowed(host, req.allowPrivate);
  const headers = req.body !== undefined ? { ...req.headers, 'Content-Length': String(Buffer.byteLength(req.body)) } : req.headers;
  return new Promise((resolve, reject) => {
    const request = mod.request(url, { method: req.method, headers, lookup: guardedLookup(req.allowPrivate) as never, agent: false, signal: req.signal }, resolve);
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${Math.round(req.timeoutMs / 100) / 10} s`)), req.timeoutMs);
    request.on('response', () => clearTimeout(timer));
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    request.on('close', () => clearTimeout(timer));
    request.end(req.body);
  });
}

/** Reads a whole response body as text, up to `maxBytes`. */
export async function readBody(res: http.IncomingMessage, maxBytes = 8 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      res.destroy();
      throw new Error(`the answer is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
