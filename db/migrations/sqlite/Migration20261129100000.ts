import { Migration } from '@mikro-orm/migrations';

/** Circuit breakers per platform (refusals counted in a window; while open, when the next probe may go), and the platform a pending job waits for. */
export class Migration20261129100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create table `platform_breakers` (`platform` text not null primary key, `refusals` integer not null, `window_started_at` datetime not null, `opened_at` datetime null, `next_probe_at` datetime null, `backoff_ms` integer not null, `probe_until` datetime null, `last_reason` text null, `updated_at` datetime not null)',
    );
    this.addSql('alter table `jobs` add column `waiting_platform` text null');
  }
}
