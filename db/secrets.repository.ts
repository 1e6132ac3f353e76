import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';

/** Returns the named server secret, creating it on first use; concurrent creators agree on one value. */
export async function serverSecret(em: EntityManager, name: string): Promise<string> {
  const conn = em.getConnection();
  await conn.execute('insert into server_secrets (name, value) values (?, ?) on conflict (name) do nothing', [name, crypto.randomBytes(32).toString('base64url')], 'run');
  const rows = (await conn.execute('select value from server_secrets where name = ?', [name], 'all')) as { value: string }[];
  return rows[0]!.value;
}
