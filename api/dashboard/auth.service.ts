// Signing in to the dashboard: one-time links (issued by the operator CLI), email + password, and
// the rate limit on failed attempts.
import type { EntityManager } from '@mikro-orm/core';
import {
  consumeLoginLink,
  countFailedSignIns,
  createLoginLink,
  findOwner,
  findOwnerByEmail,
  normalizeEmail,
  recordFailedSignIn,
  setPasswordHash,
} from '../../accounts/owners.repository';
import type { Config } from '../../lib/config';
import { DomainError } from '../../lib/errors';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords';

/** A sign-in link is valid for 15 minutes, once (docs/dashboard.md). */
export const LOGIN_LINK_TTL_MS = 15 * 60_000;
/** Failed attempts count against the limit for this long. */
const ATTEMPT_WINDOW_MS = 15 * 60_000;

export const LOGIN_LINK_PATH = '/dashboard/login/';

/** A new one-time sign-in URL for the account: `{PUBLIC_BASE_URL}/dashboard/login/{token}`. */
export async function issueLoginLink(em: EntityManager, config: Pick<Config, 'publicBaseUrl'>, accountId: string): Promise<{ url: string; expiresAt: Date }> {
  const { token, expiresAt } = await createLoginLink(em, accountId, LOGIN_LINK_TTL_MS);
  return { url: `${config.publicBaseUrl}${LOGIN_LINK_PATH}${token}`, expiresAt };
}

const ipBucket = (ip: string) => `ip:${ip}`;
const emailBucket = (email: string) => `email:${normalizeEmail(email)}`;

/** 429 once a bucket has used up its failed attempts in the window. */
async function assertNotThrottled(em: EntityManager, config: Pick<Config, 'dashboardSignInAttempts'>, buckets: string[]): Promise<void> {
  const since = new Date(Date.now() - ATTEMPT_WINDOW_MS);
  for (const bucket of buckets) {
    if ((await countFailedSignIns(em, bucket, since)) >= config.dashboardSignInAttempts) {
      throw new DomainError('rate_limited', `Too many failed sign-in attempts; wait ${ATTEMPT_WINDOW_MS / 60_000} minutes and try again, or ask your operator for a sign-in link`, {
        retryAfterSeconds: ATTEMPT_WINDOW_MS / 1000,
      });
    }
  }
}

/** Counts a failed attempt against each bucket, then throws `error`. */
async function failed(em: EntityManager, buckets: string[], error: DomainError): Promise<never> {
  await recordFailedSignIn(em, buckets, new Date(Date.now() - ATTEMPT_WINDOW_MS));
  throw error;
}

/** The account whose owner has this email and password; one message for every kind of miss, and the same work done. */
export async function signInWithPassword(
  em: EntityManager,
  config: Pick<Config, 'dashboardSignInAttempts'>,
  input: { email: string; password: string; ip: string },
): Promise<string> {
  const buckets = [ipBucket(input.ip), emailBucket(input.email)];
  await assertNotThrottled(em, config, buckets);
  const owner = input.email.trim() ? await findOwnerByEmail(em, input.email) : null;
  const ok = await verifyPassword(input.password, owner?.passwordHash ?? (await decoyHash()));
  if (!owner?.passwordHash || !ok) return failed(em, buckets, new DomainError('unauthenticated', 'The email or password is not right'));
  return owner.accountId;
}

/** The account a one-time link signs in to; the link is used up. */
export async function redeemLoginLink(em: EntityManager, config: Pick<Config, 'dashboardSignInAttempts'>, input: { token: string; ip: string }): Promise<string> {
  const buckets = [ipBucket(input.ip)];
  await assertNotThrottled(em, config, buckets);
  const accountId = /^[A-Za-z0-9_-]{43}$/.test(input.token) ? await consumeLoginLink(em, input.token) : null;
  if (!accountId) return failed(em, buckets, new DomainError('unauthenticated', 'This sign-in link is not valid: it was used already, has expired (links last 15 minutes) or is mistyped. Ask your operator for a new one.'));
  return accountId;
}

/** Sets or changes the owner's password; a password already set must be given (and is rate-limited like a sign-in) to change it. */
export async function changePassword(
  em: EntityManager,
  config: Pick<Config, 'dashboardSignInAttempts'>,
  accountId: string,
  input: { current: string; next: string; confirm: string },
): Promise<void> {
  const owner = await findOwner(em, accountId);
  if (owner?.passwordHash) {
    const buckets = [`password-change:${accountId}`];
    await assertNotThrottled(em, config, buckets);
    if (!(await verifyPassword(input.current, owner.passwordHash))) return failed(em, buckets, DomainError.invalidField('current_password', 'is not your current password'));
  }
  const problem = passwordProblem(input.next);
  if (problem) throw DomainError.invalid(problem, [{ field: 'new_password', message: problem }]);
  if (input.next !== input.confirm) throw DomainError.invalid('The two new passwords differ', [{ field: 'confirm_password', message: 'does not match the new password' }]);
  await setPasswordHash(em, accountId, await hashPassword(input.next));
}
