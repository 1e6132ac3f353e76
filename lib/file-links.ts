import crypto from 'node:crypto';

export type LinkCheck = { ok: true; jobId: string; expiresAt: Date } | { ok: false; reason: 'invalid' | 'expired' };

/** Signatures of the links the service hands out, kept for reuse: a job read signs each of its files' links, and clients poll. */
const SIGNATURES_KEPT = 10_000;

/** Signs and verifies `/v1/files/{token}` tokens: `{jobId}.{expiresEpochSeconds}.{hmac}`. */
export class FileLinks {
  private readonly signatures = new Map<string, string>();

  constructor(
    private readonly secret: string,
    private readonly baseUrl: string,
  ) {}

  url(jobId: string, expiresAt: Date): string {
    return `${this.baseUrl}/v1/files/${this.token(jobId, expiresAt)}`;
  }

  /** The link of one of the job's files by its name (the first is also served at url()). */
  fileUrl(jobId: string, expiresAt: Date, name: string): string {
    return `${this.url(jobId, expiresAt)}/${encodeURIComponent(name)}`;
  }

  token(jobId: string, expiresAt: Date): string {
    const exp = Math.floor(expiresAt.getTime() / 1000);
    const payload = `${jobId}.${exp}`;
    let sig = this.signatures.get(payload);
    if (sig === undefined) {
      sig = this.sign(payload);
      if (this.signatures.size >= SIGNATURES_KEPT) this.signatures.clear();
      this.signatures.set(payload, sig);
    }
    return `${payload}.${sig}`;
  }

  verify(token: string, now = new Date()): LinkCheck {
    const m = /^([0-9a-f-]{36})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return { ok: false, reason: 'invalid' };
    const [, jobId, exp, sig] = m as unknown as [string, string, string, string];
    const expected = Buffer.from(this.sign(`${jobId}.${exp}`));
    const given = Buffer.from(sig);
    if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return { ok: false, reason: 'invalid' };
    const expiresAt = new Date(Number(exp) * 1000);
    if (expiresAt.getTime() <= now.getTime()) return { ok: false, reason: 'expired' };
    return { ok: true, jobId, expiresAt };
  }

  /** A key for another purpose, derived from the same shared secret (e.g. signing page cursors). */
  derive(purpose: string): Buffer {
    return crypto.createHmac('sha256', this.secret).update(`mediasvc:${purpose}`).digest();
  }

  /** Verifying a token computes its signature afresh: what a client sends never fills the kept ones. */
  private sign(payload: string): string {
    return crypto.createHmac('sha256', this.secret).update(payload).digest('base64url');
  }
}
