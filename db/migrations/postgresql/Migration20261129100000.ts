import { Migration } from '@mikro-orm/migrations';

/** Circuit breakers per platform (refusals counted in a window; while open, when the next probe may go), and the platform a pending job waits for. */
export class Migration20261129100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create table "platform_breakers" ("platform" varchar(253) not null primary key, "refusals" int not null, "window_started_at" timestamptz(3) not null, "opened_at" timestamptz(3) null, "next_probe_at" timestamptz(3) null, "backoff_ms" int not null, "probe_until" timestamptz(3) null, "last_reason" text null, "updated_at" timestamptz(3) not null)',
    );
    this.addSql('alter table "jobs" add column "waiting_platform" varchar(253) null');
  }
}
