// Owner passwords: scrypt (node:crypto) with per-password salt, stored as a PHC string that names
// the algorithm and its parameters, so stronger parameters can be introduced without breaking old hashes.
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (password: crypto.BinaryLike, salt: crypto.BinaryLike, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>;

/** OWASP's scrypt minimum: N = 2^17, r = 8, p = 1 (128 MiB, about a quarter second). */
export const SCRYPT_PARAMS = { ln: 17, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

interface ScryptParams {
  ln: number;
  r: number;
  p: number;
}

function derive(password: string, salt: Buffer, params: ScryptParams, keylen: number): Promise<Buffer> {
  const N = 2 ** params.ln;
  // scrypt needs 128·N·r bytes; allow that plus headroom (Node's default cap is 32 MiB).
  return scrypt(password.normalize('NFKC'), salt, keylen, { N, r: params.r, p: params.p, maxmem: 256 * N * params.r });
}

/** `$scrypt$ln=17,r=8,p=1$<salt b64>$<hash b64>` */
export async function hashPassword(password: string, params: ScryptParams = SCRYPT_PARAMS): Promise<string> {
  const salt = crypto.randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, params, KEY_BYTES);
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** True when `password` matches the stored PHC string; compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = PHC.exec(stored);
  if (!m) return false;
  const [, ln, r, p, salt, hash] = m as unknown as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { ln: Number(ln), r: Number(r), p: Number(p) }, expected.length);
  return crypto.timingSafeEqual(actual, expected);
}

/** A hash to verify against when there is no owner or no password, so a miss takes as long as a hit. */
let decoy: Promise<string> | null = null;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  return decoy;
}

/** Why a new password is not acceptable, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `The password must be at least ${PASSWORD_MIN_LENGTH} characters long`;
  if (password.length > PASSWORD_MAX_LENGTH) return `The password must be at most ${PASSWORD_MAX_LENGTH} characters long`;
  return null;
}
