import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000 as PgInitial } from './postgresql/Migration20261121000000';
import { Migration20261121010000 as PgIdempotency } from './postgresql/Migration20261121010000';
import { Migration20261121020000 as PgWebhooks } from './postgresql/Migration20261121020000';
import { Migration20261122100000 as PgDashboard } from './postgresql/Migration20261122100000';
import { Migration20261123100000 as PgBalance } from './postgresql/Migration20261123100000';
import { Migration20261125100000 as PgJobsByStatus } from './postgresql/Migration20261125100000';
import { Migration20261126100000 as PgUploads } from './postgresql/Migration20261126100000';
import { Migration20261127100000 as PgFailureKind } from './postgresql/Migration20261127100000';
import { Migration20261128100000 as PgOutputFiles } from './postgresql/Migration20261128100000';
import { Migration20261129100000 as PgPlatformBreakers } from './postgresql/Migration20261129100000';
import { Migration20261202100000 as PgBatches } from './postgresql/Migration20261202100000';
import { Migration20261202110000 as PgSubscriptions } from './postgresql/Migration20261202110000';
import { Migration20261121000000 as SqliteInitial } from './sqlite/Migration20261121000000';
import { Migration20261121010000 as SqliteIdempotency } from './sqlite/Migration20261121010000';
import { Migration20261121020000 as SqliteWebhooks } from './sqlite/Migration20261121020000';
import { Migration20261122100000 as SqliteDashboard } from './sqlite/Migration20261122100000';
import { Migration20261123100000 as SqliteBalance } from './sqlite/Migration20261123100000';
import { Migration20261125100000 as SqliteJobsByStatus } from './sqlite/Migration20261125100000';
import { Migration20261126100000 as SqliteUploads } from './sqlite/Migration20261126100000';
import { Migration20261127100000 as SqliteFailureKind } from './sqlite/Migration20261127100000';
import { Migration20261128100000 as SqliteOutputFiles } from './sqlite/Migration20261128100000';
import { Migration20261129100000 as SqlitePlatformBreakers } from './sqlite/Migration20261129100000';
import { Migration20261202100000 as SqliteBatches } from './sqlite/Migration20261202100000';
import { Migration20261202110000 as SqliteSubscriptions } from './sqlite/Migration20261202110000';

// Listed explicitly so migrations run the same from source and from dist/, per dialect.
export const sqliteMigrations: MigrationObject[] = [
  { name: 'Migration20261121000000', class: SqliteInitial },
  { name: 'Migration20261121010000', class: SqliteIdempotency },
  { name: 'Migration20261121020000', class: SqliteWebhooks },
  { name: 'Migration20261122100000', class: SqliteDashboard },
  { name: 'Migration20261123100000', class: SqliteBalance },
  { name: 'Migration20261125100000', class: SqliteJobsByStatus },
  { name: 'Migration20261126100000', class: SqliteUploads },
  { name: 'Migration20261127100000', class: SqliteFailureKind },
  { name: 'Migration20261128100000', class: SqliteOutputFiles },
  { name: 'Migration20261129100000', class: SqlitePlatformBreakers },
  { name: 'Migration20261202100000', class: SqliteBatches },
  { name: 'Migration20261202110000', class: SqliteSubscriptions },
];
export const postgresMigrations: MigrationObject[] = [
  { name: 'Migration20261121000000', class: PgInitial },
  { name: 'Migration20261121010000', class: PgIdempotency },
  { name: 'Migration20261121020000', class: PgWebhooks },
  { name: 'Migration20261122100000', class: PgDashboard },
  { name: 'Migration20261123100000', class: PgBalance },
  { name: 'Migration20261125100000', class: PgJobsByStatus },
  { name: 'Migration20261126100000', class: PgUploads },
  { name: 'Migration20261127100000', class: PgFailureKind },
  { name: 'Migration20261128100000', class: PgOutputFiles },
  { name: 'Migration20261129100000', class: PgPlatformBreakers },
  { name: 'Migration20261202100000', class: PgBatches },
  { name: 'Migration20261202110000', class: PgSubscriptions },
];
