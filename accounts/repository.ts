import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { Account, type PlanName } from './entity';
import { ApiKey, ApiKeyUsage } from '../keys/entity';
import { currentBalance } from '../credits/repository';
import { flushKeyUsage, forgetKeyUsage } from '../keys/usage.repository';

export const KEY_PREFIX = 'vc_';

export function hashKey(raw: string): string {
  return crypto.createHash('sha256').update(raw, 'utf8').digest('hex');
}

function randomToken(bytes: number): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

/** `whsec_` + base64 of 32 random bytes (docs/api.md, webhooks). */
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

/**
 * A verified key: its ids and plan as read, and its entities, hydrated into the request's
 * EntityManager on first use (a read that needs only the ids, the commonest request, skips that).
 */
export interface VerifiedKey {
  ok: true;
  keyId: string;
  keyPrefix: string;
  accountId: string;
  plan: PlanName;
  readonly key: ApiKey;
  readonly account: Account;
}

export type AuthResult = VerifiedKey | { ok: false; reason: 'missing' | 'invalid' | 'inactive' };

const KEY_SHAPE = /^vc_[A-Za-z0-9_-]{16,128}$/;

/**
 * How long this process trusts a verified key without reading it again. Changes made in this
 * process (deactivate, delete, plan) take effect at once; made elsewhere (the CLI, another API
 * process), within this time.
 */
export const AUTH_CACHE_TTL_MS = 2_000;

interface AuthRow {
  k_id: string;
  k_account_id: string;
  k_name: string;
  k_prefix: string;
  k_hash: string;
  k_is_active: unknown;
  k_created_at: unknown;
  k_last_used_at: unknown;
  a_id: string;
  a_name: string;
  a_plan: string;
  a_webhook_secret: string;
  a_created_at: unknown;
}

// Verified active keys by digest; only successes are kept, so unknown keys cannot grow it.
const authCache = new Map<string, { at: number; row: AuthRow }>();
const AUTH_CACHE_MAX = 10_000;

function forgetAuth(match: (row: AuthRow) => boolean): void {
  for (const [digest, entry] of authCache) if (match(entry.row)) authCache.delete(digest);
}

/** The key and its account in one read. */
async function readAuthRow(em: EntityManager, digest: string): Promise<AuthRow | undefined> {
  const rows = (await em.getConnection().execute(
    `select k.id as k_id, k.account_id as k_account_id, k.name as k_name, k.prefix as k_prefix, k.hash as k_hash, k.is_active as k_is_active,
            k.created_at as k_created_at, k.last_used_at as k_last_used_at,
            a.id as a_id, a.name as a_name, a.plan as a_plan, a.webhook_secret as a_webhook_secret, a.created_at as a_created_at
       from api_keys k join accounts a on a.id = k.account_id
      where k.hash = ?`,
    [digest],
    'all',
  )) as AuthRow[];
  return rows[0];
}

/**
 * Resolves a raw key. Looks up by SHA-256 and re-compares the digests in constant time. A key that
 * verified within AUTH_CACHE_TTL_MS is not read again, unless `fresh` asks for the stored state.
 */
export async function authenticate(em: EntityManager, raw: string | undefined, opts: { fresh?: boolean } = {}): Promise<AuthResult> {
  if (!raw) return { ok: false, reason: 'missing' };
  if (!KEY_SHAPE.test(raw)) return { ok: false, reason: 'invalid' };
  const digest = hashKey(raw);
  const now = Date.now();
  const cached = opts.fresh ? undefined : authCache.get(digest);
  let row = cached && now - cached.at < AUTH_CACHE_TTL_MS ? cached.row : undefined;
  if (!row) {
    authCache.delete(digest);
    row = await readAuthRow(em, digest);
    if (!row || !crypto.timingSafeEqual(Buffer.from(row.k_hash, 'hex'), Buffer.from(digest, 'hex'))) return { ok: false, reason: 'invalid' };
    if (!Number(row.k_is_active)) return { ok: false, reason: 'inactive' };
    if (authCache.size >= AUTH_CACHE_MAX) authCache.clear();
    authCache.set(digest, { at: now, row });
  }
  return verifiedKey(em, row);
}

function verifiedKey(em: EntityManager, row: AuthRow): VerifiedKey {
  let key: ApiKey | undefined;
  let account: Account | undefined;
  return {
    ok: true,
    keyId: row.k_id,
    keyPrefix: row.k_prefix,
    accountId: row.a_id,
    plan: row.a_plan as PlanName,
    // entities of this request's EntityManager, hydrated from the row as a find would
    get key() {
      return (key ??= em.map(ApiKey, { id: row.k_id, account_id: row.k_account_id, name: row.k_name, prefix: row.k_prefix, hash: row.k_hash, is_active: row.k_is_active, created_at: row.k_created_at, last_used_at: row.k_last_used_at } as never));
    },
    get account() {
      return (account ??= em.map(Account, { id: row.a_id, name: row.a_name, plan: row.a_plan, webhook_secret: row.a_webhook_secret, created_at: row.a_created_at } as never));
    },
  };
}

export async function setKeyActive(em: EntityManager, keyId: string, active: boolean): Promise<ApiKey> {
  const key = await em.findOne(ApiKey, keyId);
  if (!key) throw new Error(`key ${keyId} does not exist`);
  key.isActive = active;
  await em.flush();
  forgetAuth((r) => r.k_id === keyId);
  return key;
}

/** Deletes a key for good, with its usage history. */
export async function deleteKey(em: EntityManager, keyId: string): Promise<void> {
  const key = await em.findOne(ApiKey, keyId);
  if (!key) throw new Error(`key ${keyId} does not exist`);
  forgetKeyUsage(em, keyId);
  await em.nativeDelete(ApiKeyUsage, { keyId });
  em.remove(key);
  await em.flush();
  forgetAuth((r) => r.k_id === keyId);
}

/** Replaces the account's webhook secret; returns the new one. */
export async function rotateWebhookSecret(em: EntityManager, accountId: string): Promise<string> {
  const account = await em.findOneOrFail(Account, accountId);
  account.webhookSecret = newWebhookSecret();
  await em.flush();
  forgetAuth((r) => r.a_id === accountId);
  return account.webhookSecret;
}

/** Moves the account to another plan: its rate limit changes at once, its allowance at the next top-up. */
export async function setPlan(em: EntityManager, accountId: string, plan: PlanName): Promise<Account> {
  const account = await em.findOneOrFail(Account, accountId, { failHandler: () => new Error(`account ${accountId} does not exist`) });
  account.plan = plan;
  await em.flush();
  forgetAuth((r) => r.a_id === accountId);
  return account;
}

/** A key of the account, or null (another account's key looks exactly like an unknown one). */
export function findAccountKey(em: EntityManager, accountId: string, keyId: string): Promise<ApiKey | null> {
  if (!/^[0-9a-f-]{36}$/i.test(keyId)) return Promise.resolve(null);
  return em.findOne(ApiKey, { id: keyId.toLowerCase(), accountId });
}

export async function listAccountKeys(em: EntityManager, accountId: string): Promise<ApiKey[]> {
  await flushKeyUsage(em);
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
  await flushKeyUsage(em);
  return em.find(ApiKeyUsage, { keyId: { $in: keyIds }, day: { $gte: sinceDay } });
}
