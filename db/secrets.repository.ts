import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { purposeOf, secretBoxOf } from './sealed-secrets';

/** Returns the named server secret, creating it on first use; concurrent creators agree on one value. Stored sealed. */
export async function serverSecret(em: EntityManager, name: string): Promise<string> {
  const conn = em.getConnection();
  const box = secretBoxOf(em);
  const purpose = purposeOf('server_secrets', 'value');
  await conn.execute('insert into server_secrets (name, value) values (?, ?) on conflict (name) do nothing', [name, box.seal(crypto.randomBytes(32).toString('base64url'), purpose)], 'run');
  const rows = (await conn.execute('select value from server_secrets where name = ?', [name], 'all')) as { value: string }[];
  return box.open(rows[0]!.value, purpose);
}
