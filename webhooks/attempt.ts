import { sendWebhook } from './sender';
import { deliveryHeaders } from './signing';

export interface AttemptRequest {
  /** Stable per (job, event, target): the `webhook-id` header of every attempt. */
  deliveryId: string;
  url: string;
  /** The exact bytes sent on every attempt. */
  body: string;
  /** The signing secret; null when the endpoint no longer exists (nothing is sent). */
  secret: string | null;
  /** When this attempt starts, ms (the `webhook-timestamp`); tests pass virtual time. */
  startedAtMs: number;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface AttemptOutcome {
  status: 'succeeded' | 'failed';
  statusCode: number | null;
  responseTimeMs: number;
  error: string | null;
  /** No further attempt makes sense: success, 410 Gone, or no endpoint any more. */
  final: boolean;
}

/** One signed delivery attempt: a 2xx within the timeout succeeds; a 410 ends the retries. Never throws. */
export async function attemptDelivery(req: AttemptRequest): Promise<AttemptOutcome> {
  if (req.secret === null) return { status: 'failed', statusCode: null, responseTimeMs: 0, error: 'the webhook endpoint no longer exists', final: true };
  const headers = deliveryHeaders(req.secret, req.deliveryId, req.body, Math.floor(req.startedAtMs / 1000));
  const res = await sendWebhook({ url: req.url, body: req.body, headers, timeoutMs: req.timeoutMs, allowPrivate: req.allowPrivate });
  const ok = res.statusCode !== null && res.statusCode >= 200 && res.statusCode < 300;
  return {
    status: ok ? 'succeeded' : 'failed',
    statusCode: res.statusCode,
    responseTimeMs: res.responseTimeMs,
    error: res.statusCode === 410 ? 'the endpoint answered HTTP 410 Gone; no more attempts' : res.error,
    final: ok || res.statusCode === 410,
  };
}
