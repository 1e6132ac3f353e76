// Node-side outbound HTTP for users' URLs (direct media, PeerTube, webhooks): every connection goes
// through resolveAllowed, literals and names alike, and redirects are never followed here (callers
// that follow them make a new request, which is checked again). Source traffic goes through the
// operator's source proxy for its host, if any; webhooks always go straight out.
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import tls from 'node:tls';
import { urlHost } from '../../lib/address-policy';
import { guardedLookup, resolveAllowed } from './address-check';
import { currentSourceRoutes, tunnelThrough } from './upstream-proxy';

export interface EgressRequest {
  url: string;
  method: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** No answer (headers) within this long fails the request. */
  timeoutMs: number;
  signal?: AbortSignal;
  allowPrivate: boolean;
  /** A source (through the source proxy, when one is configured) or a webhook (never through it). */
  traffic: 'source' | 'webhook';
}

/** Sends one request; resolves with the response (unread), rejects with EgressRefusedError or a network error. */
export async function egressRequest(req: EgressRequest): Promise<http.IncomingMessage> {
  const url = new URL(req.url);
  const mod = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
  if (!mod) throw new Error(`${url.protocol} URLs are not fetched`);
  // Node does not call `lookup` for IP literals: check those here, names at connect time.
  const { host, literal } = urlHost(req.url);
  const proxy = req.traffic === 'source' ? currentSourceRoutes().proxyFor(host) : null;
  // through a proxy, the proxy is asked for the address checked here (Node's lookup is not called);
  // a request with createConnection and no agent connects through it (an agent would make its own)
  const checked = literal || proxy ? (await resolveAllowed(host, req.allowPrivate))[0]! : null;
  const headers = req.body !== undefined ? { ...req.headers, 'Content-Length': String(Buffer.byteLength(req.body)) } : req.headers;
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const tunnel = proxy && checked
    ? (_: unknown, done: (err: Error | null, socket?: net.Socket) => void) => {
        tunnelThrough(proxy, checked.address, port).then(
          (socket) => {
            // the tunnel comes paused; the origin says nothing before the request (or TLS hello) is sent
            socket.resume();
            done(null, url.protocol === 'https:' ? tls.connect({ socket, servername: literal ? undefined : host }) : socket);
          },
          (err: Error) => done(err),
        );
        return undefined;
      }
    : undefined;
  return new Promise((resolve, reject) => {
    const request = mod.request(url, { method: req.method, headers, lookup: guardedLookup(req.allowPrivate) as never, signal: req.signal, ...(tunnel ? { createConnection: tunnel as never } : { agent: false }) }, resolve);
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
