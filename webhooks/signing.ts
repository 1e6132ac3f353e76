import crypto from 'node:crypto';

export const WEBHOOK_USER_AGENT = 'mediasvc-webhooks/1.0 (+https://github.com/mediasvc)';

/** `X-Service-Signature`: lowercase hex HMAC-SHA256 over the exact body, keyed with the secret string's UTF-8 bytes. */
export function serviceSignature(secret: string, body: string): string {
  return crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(body, 'utf8').digest('hex');
}

/** Standard Webhooks `webhook-signature`: `v1,` + base64 HMAC-SHA256(base64-decoded secret after `whsec_`, `{id}.{ts}.{body}`). */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

/** Every header of one delivery attempt. */
export function deliveryHeaders(secret: string, deliveryId: string, body: string, nowSeconds: number): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    'X-Service-Signature': serviceSignature(secret, body),
    'webhook-id': deliveryId,
    'webhook-timestamp': String(nowSeconds),
    'webhook-signature': standardSignature(secret, deliveryId, nowSeconds, body),
  };
}
