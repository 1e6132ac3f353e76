import { EgressRefusedError } from '../engines/egress/address-check';
import { egressRequest } from '../engines/egress/http-client';

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
export async function sendWebhook(req: WebhookRequest): Promise<WebhookResponse> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  const signal = AbortSignal.timeout(req.timeoutMs);
  try {
    const res = await egressRequest({ url: req.url, method: 'POST', headers: req.headers, body: req.body, timeoutMs: req.timeoutMs, signal, allowPrivate: req.allowPrivate, traffic: 'webhook' });
    const code = res.statusCode ?? 0;
    // the whole answer must arrive within the window too
    for await (const _ of res) void _;
    return { statusCode: code, responseTimeMs: elapsed(), error: code >= 200 && code < 300 ? null : `the endpoint answered HTTP ${code}` };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const error = err instanceof EgressRefusedError
      ? err.targetSentence()
      : signal.aborted
        ? `no answer within ${req.timeoutMs / 1000} s`
        : networkSentence(e);
    return { statusCode: null, responseTimeMs: elapsed(), error };
  }
}

/** What went wrong on the way to the endpoint, in words a person can act on (the system's code kept in brackets). */
const NETWORK_SENTENCES: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused: nothing accepts connections at that address and port',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved just now',
  ECONNRESET: 'the endpoint closed the connection before answering',
  EPIPE: 'the endpoint closed the connection before answering',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the network of that host cannot be reached',
  CERT_HAS_EXPIRED: "the endpoint's TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the endpoint's TLS certificate is self-signed",
  ERR_TLS_CERT_ALTNAME_INVALID: "the endpoint's TLS certificate is not valid for that host name",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the endpoint's TLS certificate cannot be verified",
};

function networkSentence(e: NodeJS.ErrnoException): string {
  const sentence = e.code ? NETWORK_SENTENCES[e.code] : undefined;
  if (sentence) return `${sentence} (${e.code})`;
  return e.code && !e.message.includes(e.code) ? `${e.message} (${e.code})` : e.message;
}
