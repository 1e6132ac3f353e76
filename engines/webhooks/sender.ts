import { EgressRefusedError } from '../egress/address-check';
import { egressRequest } from '../egress/http-client';

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
    const res = await egressRequest({ url: req.url, method: 'POST', headers: req.headers, body: req.body, timeoutMs: req.timeoutMs, signal, allowPrivate: req.allowPrivate });
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
        : e.code && !e.message.includes(e.code) ? `${e.message} (${e.code})` : e.message;
    return { statusCode: null, responseTimeMs: elapsed(), error };
  }
}
