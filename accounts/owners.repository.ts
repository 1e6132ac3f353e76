// Account owners, one-time sign-in links, dashboard sessions and failed sign-in attempts.
import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { Account } from './entity';
import { hashKey } from './repository';
import { AccountOwner, DashboardSession, LoginLink, SignInAttempt } from './owner.entity';

/** A random secret for a cookie or a link: 32 bytes, base64url. */
function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function findOwner(em: EntityManager, accountId: string): Promise<AccountOwner | null> {
  return em.findOne(AccountOwner, { accountId });
}

export function findOwnerByEmail(em: EntityManager, email: string): Promise<AccountOwner | null> {
  return em.findOne(AccountOwner, { email: normalizeEmail(email) });
}

/** The owner row of an account, created on first use. */
async function ownerRow(em: EntityManager, accountId: string): Promise<AccountOwner> {
  await em.findOneOrFail(Account, accountId, { failHandler: () => new Error(`account ${accountId} does not exist`) });
  return (await findOwner(em, accountId)) ?? em.create(AccountOwner, { accountId, email: null, passwordHash: null, passwordChangedAt: null, createdAt: new Date() });
}

/** Why `email` cannot be the sign-in email of `accountId`'s owner (malformed, or another account's), or null. */
export async function ownerEmailProblem(em: EntityManager, email: string, accountId: string | null): Promise<string | null> {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim()) || email.length > 254) return `${email} is not an email address`;
  const holder = await findOwnerByEmail(em, email);
  return holder && holder.accountId !== accountId ? `the email ${normalizeEmail(email)} already belongs to another account` : null;
}

/** Sets the owner's sign-in email; a malformed one, or one another account already uses, is refused. */
export async function setOwnerEmail(em: EntityManager, accountId: string, email: string): Promise<AccountOwner> {
  const problem = await ownerEmailProblem(em, email, accountId);
  if (problem) throw new Error(problem);
  const owner = await ownerRow(em, accountId);
  owner.email = normalizeEmail(email);
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw new Error(`the email ${owner.email} already belongs to another account`);
    throw err;
  }
  return owner;
}

export async function setPasswordHash(em: EntityManager, accountId: string, passwordHash: string): Promise<void> {
  const owner = await ownerRow(em, accountId);
  owner.passwordHash = passwordHash;
  owner.passwordChangedAt = new Date();
  await em.flush();
}

/** Stores a new one-time link for the account and returns its token (only its hash is kept). */
export async function createLoginLink(em: EntityManager, accountId: string, ttlMs: number, now = new Date()): Promise<{ token: string; expiresAt: Date }> {
  await em.findOneOrFail(Account, accountId, { failHandler: () => new Error(`account ${accountId} does not exist`) });
  await em.nativeDelete(LoginLink, { expiresAt: { $lt: now } });
  const token = newToken();
  const expiresAt = new Date(now.getTime() + ttlMs);
  em.create(LoginLink, { tokenHash: hashKey(token), accountId, createdAt: now, expiresAt, usedAt: null });
  await em.flush();
  return { token, expiresAt };
}

/** Marks an unused, unexpired link used and returns its account id; one conditional update, so a link works once even under races. */
export async function consumeLoginLink(em: EntityManager, token: string, now = new Date()): Promise<string | null> {
  const tokenHash = hashKey(token);
  const updated = await em.nativeUpdate(LoginLink, { tokenHash, usedAt: null, expiresAt: { $gt: now } }, { usedAt: now });
  if (updated !== 1) return null;
  return (await em.findOne(LoginLink, { tokenHash }))?.accountId ?? null;
}

/** Starts a session (anonymous when accountId is null); the token goes into the cookie, its hash into the table. */
export async function createSession(em: EntityManager, accountId: string | null, ttlMs: number, now = new Date()): Promise<{ token: string; session: DashboardSession }> {
  await em.nativeDelete(DashboardSession, { expiresAt: { $lt: now } });
  const token = newToken();
  const session = em.create(DashboardSession, {
    idHash: hashKey(token),
    accountId,
    csrfToken: newToken(),
    flash: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + ttlMs),
  });
  await em.flush();
  return { token, session };
}

/** The session behind a cookie token, expired or not (the caller tells the two apart). */
export function findSession(em: EntityManager, token: string): Promise<DashboardSession | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return Promise.resolve(null);
  return em.findOne(DashboardSession, { idHash: hashKey(token) });
}

export async function deleteSession(em: EntityManager, session: DashboardSession): Promise<void> {
  await em.nativeDelete(DashboardSession, { idHash: session.idHash });
}

export async function setFlash(em: EntityManager, session: DashboardSession, message: string | null): Promise<void> {
  session.flash = message;
  await em.flush();
}

/** Failed sign-ins per bucket since `since`. */
export function countFailedSignIns(em: EntityManager, bucket: string, since: Date): Promise<number> {
  return em.count(SignInAttempt, { bucket, createdAt: { $gte: since } });
}

/** Records a failed sign-in under each bucket, dropping attempts older than `keepSince`. */
export async function recordFailedSignIn(em: EntityManager, buckets: string[], keepSince: Date, now = new Date()): Promise<void> {
  await em.nativeDelete(SignInAttempt, { createdAt: { $lt: keepSince } });
  for (const bucket of buckets) em.create(SignInAttempt, { bucket: bucket.slice(0, 300), createdAt: now });
  await em.flush();
}
