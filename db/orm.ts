import fs from 'node:fs';
import path from 'node:path';
import { MikroORM, type Options } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import type { Config } from '../lib/config';
import { loadSecretBox } from '../lib/secret-box';
import { attachSecretBox, resealStoredSecrets } from './sealed-secrets';
import { BoundPostgreSqlDriver, BoundSqliteDriver } from './bound-drivers';
import { AccountEntitySchema } from '../accounts/entity';
import { ApiKeyEntitySchema, ApiKeyUsageEntitySchema } from '../keys/entity';
import { CreditEntryEntitySchema } from '../credits/entity';
import { JobEntitySchema } from '../jobs/entity';
import { BatchEntitySchema, BatchItemEntitySchema } from '../batches/entity';
import { SubscriptionEntitySchema, SubscriptionItemEntitySchema } from '../subscriptions/entity';
import { postgresMigrations, sqliteMigrations } from './migrations';
import { AccountOwnerEntitySchema, DashboardSessionEntitySchema, LoginLinkEntitySchema, SignInAttemptEntitySchema } from '../accounts/owner.entity';
import { IdempotencyRecordEntitySchema, RateLimitCounterEntitySchema, ServerSecretEntitySchema } from './system.entity';
import { UploadEntitySchema } from '../uploads/entity';
import { PlatformBreakerEntitySchema } from '../platforms/entity';
import { WebhookDeliveryEntitySchema, WebhookEndpointEntitySchema } from '../webhooks/entity';

export const ENTITIES = [
  AccountEntitySchema,
  ApiKeyEntitySchema,
  ApiKeyUsageEntitySchema,
  CreditEntryEntitySchema,
  JobEntitySchema,
  RateLimitCounterEntitySchema,
  ServerSecretEntitySchema,
  IdempotencyRecordEntitySchema,
  WebhookEndpointEntitySchema,
  WebhookDeliveryEntitySchema,
  AccountOwnerEntitySchema,
  LoginLinkEntitySchema,
  DashboardSessionEntitySchema,
  SignInAttemptEntitySchema,
  UploadEntitySchema,
  PlatformBreakerEntitySchema,
  BatchEntitySchema,
  BatchItemEntitySchema,
  SubscriptionEntitySchema,
  SubscriptionItemEntitySchema,
];

export type Orm = MikroORM;
export type Dialect = 'sqlite' | 'postgresql';

/** Options for the configured database: PostgreSQL when DATABASE_URL is set, else SQLite under DATA_DIR. */
export function ormOptions(config: Pick<Config, 'databaseUrl' | 'sqlitePath'>): Options {
  const common: Options = {
    entities: ENTITIES,
    extensions: [Migrator],
    discovery: { disableDynamicFileAccess: true },
    allowGlobalContext: false,
    debug: false,
    forceUtcTimezone: true,
  };
  if (config.databaseUrl) {
    return {
      ...common,
      driver: BoundPostgreSqlDriver,
      clientUrl: config.databaseUrl,
      migrations: { migrationsList: postgresMigrations, transactional: true, disableForeignKeys: false, silent: true, snapshot: false },
    };
  }
  fs.mkdirSync(path.dirname(config.sqlitePath), { recursive: true });
  return {
    ...common,
    driver: BoundSqliteDriver,
    dbName: config.sqlitePath,
    migrations: { migrationsList: sqliteMigrations, transactional: true, disableForeignKeys: false, silent: true, snapshot: false },
    pool: { min: 1, max: 1, afterCreate: sqliteAfterCreate } as Options['pool'],
  };
}

// WAL lets readers in other processes (the CLI) work while the API writes; busy_timeout waits out
// short locks. synchronous=NORMAL syncs the WAL at checkpoints instead of at every commit: under WAL a
// committed transaction still survives a crash of the process, only a power loss or OS crash may drop
// the last commits (README, Performance). One connection: knex opens deferred transactions, and a
// second connection's read-then-write transaction could fail with SQLITE_BUSY that busy_timeout does
// not retry, while writers serialise on SQLite's single write lock anyway.
const SQLITE_PRAGMAS = ['PRAGMA journal_mode = WAL', 'PRAGMA synchronous = NORMAL', 'PRAGMA busy_timeout = 10000'];

function sqliteAfterCreate(conn: { run: (sql: string, cb: (err?: Error) => void) => void }, done: (err?: Error, conn?: unknown) => void) {
  const next = (i: number) => {
    if (i === SQLITE_PRAGMAS.length) return done(undefined, conn);
    conn.run(SQLITE_PRAGMAS[i]!, (err) => (err ? done(err, conn) : next(i + 1)));
  };
  next(0);
}

/** Opens the database; `migrate` applies pending migrations first. */
/**
 * Opens the database with the key ring for its sealed secrets; `migrate` applies pending migrations
 * and then seals any secret still stored in plaintext.
 */
export async function openOrm(config: Pick<Config, 'databaseUrl' | 'sqlitePath' | 'secrets'>, opts: { migrate?: boolean; warn?: (msg: string) => void } = {}): Promise<Orm> {
  const orm = await MikroORM.init(ormOptions(config));
  attachSecretBox(orm, loadSecretBox(config.secrets, opts.warn ?? ((msg) => process.emitWarning(msg))));
  if (opts.migrate) {
    await orm.getMigrator().up();
    // rows from before secrets were sealed are sealed by the first start that has a key
    await resealStoredSecrets(orm.em.fork(), { plaintextOnly: true });
  }
  return orm;
}
