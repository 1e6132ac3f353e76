import { Type, type EntityManager, type EntityProperty, type MikroORM, type Platform } from '@mikro-orm/core';
import { isSealed, SecretKeyError, type SecretBox } from '../lib/secret-box';

// Each open ORM has its own key ring (tests open several databases in one process), found from the
// ORM's configuration object, which its platform and every entity manager share.
const BOXES = new WeakMap<object, SecretBox>();

export function attachSecretBox(orm: MikroORM, box: SecretBox): void {
  BOXES.set(orm.config, box);
}

function boxOf(config: object): SecretBox {
  const box = BOXES.get(config);
  if (!box) throw new SecretKeyError('this database was opened without a key for stored secrets (open it with openOrm)');
  return box;
}

export function secretBoxOf(em: EntityManager): SecretBox {
  return boxOf(em.config);
}

/** A secret column: sealed on the way into the database, opened on the way out. */
export class SealedSecretType extends Type<string, string> {
  constructor(private readonly purpose: string) {
    super();
  }

  override convertToDatabaseValue(value: string, platform: Platform): string {
    return boxOf(platform.getConfig()).seal(value, this.purpose);
  }

  override convertToJSValue(value: string, platform: Platform): string {
    return boxOf(platform.getConfig()).open(value, this.purpose);
  }

  override compareAsType(): string {
    return 'string';
  }

  // the columns were created as plain strings: keep their declared types
  override getColumnType(prop: EntityProperty, platform: Platform): string {
    return platform.getVarcharTypeDeclarationSQL(prop);
  }
}

/** Every sealed column, with the purpose bound into its values. */
const SEALED_COLUMNS = [
  { table: 'accounts', key: 'id', column: 'webhook_secret' },
  { table: 'webhook_endpoints', key: 'id', column: 'secret' },
  { table: 'server_secrets', key: 'name', column: 'value' },
] as const;

export const purposeOf = (table: string, column: string) => `${table}.${column}`;

export interface ResealCounts {
  /** Values that were stored in plaintext (before sealing existed) and are now sealed. */
  sealed: number;
  /** Values that were sealed under a previous key and are now under the current one. */
  rekeyed: number;
  /** Values already sealed under the current key. */
  current: number;
}

/**
 * Seals every stored secret under the current key: plaintext rows from before sealing existed and
 * (unless `plaintextOnly`) rows under a previous key. Each row changes only if it still holds what was read, so processes
 * starting together do not undo each other.
 */
export async function resealStoredSecrets(em: EntityManager, opts: { plaintextOnly?: boolean } = {}): Promise<ResealCounts> {
  const box = secretBoxOf(em);
  const conn = em.getConnection();
  const counts: ResealCounts = { sealed: 0, rekeyed: 0, current: 0 };
  for (const { table, key, column } of SEALED_COLUMNS) {
    const purpose = purposeOf(table, column);
    const rows = (await conn.execute(`select ${key} as k, ${column} as v from ${table}`, [], 'all')) as { k: string | number; v: string }[];
    for (const row of rows) {
      if (box.isCurrent(row.v) || (opts.plaintextOnly && isSealed(row.v))) {
        counts.current++;
        continue;
      }
      const plain = box.open(row.v, purpose);
      await conn.execute(`update ${table} set ${column} = ? where ${key} = ? and ${column} = ?`, [box.seal(plain, purpose), row.k, row.v], 'run');
      if (plain === row.v) counts.sealed++;
      else counts.rekeyed++;
    }
  }
  return counts;
}
