import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { isPrivateAddress, safeLookup } from '../lib/url-safety';

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface WebhookResponse {
  /** null when no HTTP answer came (timeout, refused, address not allowed). */
  statusCode: number | null;
  responseTimeMs: number;
  error: string | null;
}

/** POSTs one webhook: a 2xx within the timeout is success; redirects are not followed. Never throws. */
export function sendWebhook(req: WebhookRequest): Promise<WebhookResponse> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: Omit<WebhookResponse, 'responseTimeMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, responseTimeMs: elapsed() });
    };
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return done({ statusCode: null, error: 'the target URL is not valid' });
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) && isPrivateAddress(host) && !req.allowPrivate) {
      return done({ statusCode: null, error: `${host} is a private or reserved address, which is not allowed` });
    }
    const mod = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
    if (!mod) return done({ statusCode: null, error: 'the target URL must use http or https' });
    const timer = setTimeout(() => {
      request.destroy(new Error(`no answer within ${req.timeoutMs / 1000} s`));
    }, req.timeoutMs);
    const request = mod.request(
      url,
      { method: 'POST', headers: { ...req.headers, 'Content-Length': String(Buffer.byteLength(req.body)) }, lookup: safeLookup(req.allowPrivate) as never, agent: false },
      (res) => {
        const code = res.statusCode ?? 0;
        res.resume();
        res.on('end', () => done({ statusCode: code, error: code >= 200 && code < 300 ? null : `the endpoint answered HTTP ${code}` }));
        res.on('error', (e) => done({ statusCode: code, error: e.message }));
      },
    );
    request.on('error', (e: NodeJS.ErrnoException) => done({ statusCode: null, error: e.code && !e.message.includes(e.code) ? `${e.message} (${e.code})` : e.message }));
    request.end(req.body);
  });
}
