import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { Account, type PlanName } from './account.entity';
import { ApiKey, ApiKeyUsage } from './api-key.entity';
import { currentBalance } from './credits.repository';

export const KEY_PREFIX = 'vc_';

export function hashKey(raw: string): string {
  return crypto.createHash('sha256').update(raw, 'utf8').digest('hex');
}

function randomToken(bytes: number): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

/** `whsec_` + base64 of 32 random bytes (decisions.md). */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

/** Creates an account and grants its first monthly allowance. */
export async function createAccount(em: EntityManager, name: string, plan: PlanName): Promise<Account> {
  const account = em.create(Account, { id: crypto.randomUUID(), name, plan, webhookSecret: newWebhookSecret(), createdAt: new Date() });
  await em.flush();
  await currentBalance(em, account.id);
  return account;
}

/** Creates a key; the full value is returned here once and never stored. */
export async function createApiKey(em: EntityManager, accountId: string, name: string): Promise<{ key: string; record: ApiKey }> {
  await em.findOneOrFail(Account, accountId, { failHandler: () => new Error(`account ${accountId} does not exist`) });
  const key = `${KEY_PREFIX}${randomToken(32)}`;
  const record = em.create(ApiKey, {
    id: crypto.randomUUID(),
    accountId,
    name,
    prefix: key.slice(0, 8),
    hash: hashKey(key),
    isActive: true,
    createdAt: new Date(),
    lastUsedAt: null,
  });
  await em.flush();
  return { key, record };
}

export type AuthResult = { ok: true; key: ApiKey; account: Account } | { ok: false; reason: 'missing' | 'invalid' | 'inactive' };

const KEY_SHAPE = /^vc_[A-Za-z0-9_-]{16,128}$/;

/** Resolves a raw key. Looks up by SHA-256 and re-compares the digests in constant time. */
export async function authenticate(em: EntityManager, raw: string | undefined): Promise<AuthResult> {
  if (!raw) return { ok: false, reason: 'missing' };
  if (!KEY_SHAPE.test(raw)) return { ok: false, reason: 'invalid' };
  const digest = hashKey(raw);
  const key = await em.findOne(ApiKey, { hash: digest });
  if (!key || !crypto.timingSafeEqual(Buffer.from(key.hash, 'hex'), Buffer.from(digest, 'hex'))) return { ok: false, reason: 'invalid' };
  if (!key.isActive) return { ok: false, reason: 'inactive' };
  const account = await em.findOne(Account, key.accountId);
  if (!account) return { ok: false, reason: 'invalid' };
  return { ok: true, key, account };
}

/** Sets last_used_at and bumps today's request count for the key. */
export async function recordKeyUsage(em: EntityManager, keyId: string, now = new Date()): Promise<void> {
  const conn = em.getConnection();
  await conn.execute('update api_keys set last_used_at = ? where id = ?', [now, keyId], 'run');
  await conn.execute(
    `insert into api_key_usage (key_id, day, request_count) values (?, ?, 1)
     on conflict (key_id, day) do update set request_count = api_key_usage.request_count + 1`,
    [keyId, now.toISOString().slice(0, 10)],
    'run',
  );
}

export async function setKeyActive(em: EntityManager, keyId: string, active: boolean): Promise<ApiKey> {
  const key = await em.findOne(ApiKey, keyId);
  if (!key) throw new Error(`key ${keyId} does not exist`);
  key.isActive = active;
  await em.flush();
  return key;
}

/** Deletes a key for good, with its usage history. */
export async function deleteKey(em: EntityManager, keyId: string): Promise<void> {
  const key = await em.findOne(ApiKey, keyId);
  if (!key) throw new Error(`key ${keyId} does not exist`);
  await em.nativeDelete(ApiKeyUsage, { keyId });
  em.remove(key);
  await em.flush();
}

/** Replaces the account's webhook secret; returns the new one. */
export async function rotateWebhookSecret(em: EntityManager, accountId: string): Promise<string> {
  const account = await em.findOneOrFail(Account, accountId);
  account.webhookSecret = newWebhookSecret();
  await em.flush();
  return account.webhookSecret;
}

/** Moves the account to another plan: its rate limit changes at once, its allowance at the next top-up. */
export async function setPlan(em: EntityManager, accountId: string, plan: PlanName): Promise<Account> {
  const account = await em.findOneOrFail(Account, accountId, { failHandler: () => new Error(`account ${accountId} does not exist`) });
  account.plan = plan;
  await em.flush();
  return account;
}

/** A key of the account, or null (another account's key looks exactly like an unknown one). */
export function findAccountKey(em: EntityManager, accountId: string, keyId: string): Promise<ApiKey | null> {
  if (!/^[0-9a-f-]{36}$/i.test(keyId)) return Promise.resolve(null);
  return em.findOne(ApiKey, { id: keyId.toLowerCase(), accountId });
}

export function listAccountKeys(em: EntityManager, accountId: string): Promise<ApiKey[]> {
  return em.find(ApiKey, { accountId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function renameKey(em: EntityManager, key: ApiKey, name: string): Promise<ApiKey> {
  key.name = name;
  await em.flush();
  return key;
}

/** Requests per UTC day (`YYYY-MM-DD`) of each key, from `sinceDay` on. */
export async function keyUsageByDay(em: EntityManager, keyIds: string[], sinceDay: string): Promise<ApiKeyUsage[]> {
  if (keyIds.length === 0) return [];
  return em.find(ApiKeyUsage, { keyId: { $in: keyIds }, day: { $gte: sinceDay } });
}
