// API keys of the signed-in account, with their daily request counts.
import type { EntityManager } from '@mikro-orm/core';
import type { Account } from '../accounts/entity';
import { createApiKey, deleteKey, findAccountKey, keyUsageByDay, listAccountKeys, renameKey, setKeyActive } from '../accounts/repository';
import type { ApiKey } from './entity';
import { DomainError } from '../lib/errors';
import { lastDays } from '../lib/days';

export const USAGE_DAYS = 30;
const NAME_MAX = 100;

export interface KeyWithUsage {
  key: ApiKey;
  /** Requests per day, aligned with `days`. */
  usage: number[];
}

/** Every key of the account (oldest first) with requests per day over the last 30 UTC days. */
export async function keysWithUsage(em: EntityManager, account: Account, now = new Date()): Promise<{ days: string[]; keys: KeyWithUsage[] }> {
  const days = lastDays(USAGE_DAYS, now);
  const keys = await listAccountKeys(em, account.id);
  const rows = await keyUsageByDay(em, keys.map((k) => k.id), days[0]!);
  const count = new Map(rows.map((r) => [`${r.keyId}/${r.day}`, r.requestCount]));
  return { days, keys: keys.map((key) => ({ key, usage: days.map((d) => count.get(`${key.id}/${d}`) ?? 0) })) };
}

function keyName(raw: string): string {
  const name = raw.trim();
  if (!name) throw DomainError.invalidField('name', 'is required: give the key a name that says where it is used');
  if (name.length > NAME_MAX) throw DomainError.invalidField('name', `must be at most ${NAME_MAX} characters`);
  return name;
}

/** A key of the account, or 404. */
export async function loadKey(em: EntityManager, account: Account, keyId: string): Promise<ApiKey> {
  const key = await findAccountKey(em, account.id, keyId);
  if (!key) throw DomainError.notFound(`No API key with id ${keyId} in this account`);
  return key;
}

/** Creates a key; the full value is in the result once and never stored. */
export function createKey(em: EntityManager, account: Account, name: string): Promise<{ key: string; record: ApiKey }> {
  return createApiKey(em, account.id, keyName(name));
}

export function renameAccountKey(em: EntityManager, key: ApiKey, name: string): Promise<ApiKey> {
  return renameKey(em, key, keyName(name));
}

/** Deactivating keeps the key and its usage history; requests with it get 403 until it is reactivated. */
export function setAccountKeyActive(em: EntityManager, key: ApiKey, active: boolean): Promise<ApiKey> {
  return setKeyActive(em, key.id, active);
}

export function deleteAccountKey(em: EntityManager, key: ApiKey): Promise<void> {
  return deleteKey(em, key.id);
}
