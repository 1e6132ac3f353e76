import { Migration } from '@mikro-orm/migrations';

/** Subscriptions (each a Temporal Schedule), the archive of the items each has seen, and the subscription a batch was checked for. */
export class Migration20261202110000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create table "subscriptions" ("id" varchar(36) not null primary key, "account_id" varchar(36) not null, "url" text not null, "operation" varchar(16) not null, "parameters" jsonb not null, "check_every_seconds" int not null, "start_after" timestamptz(3) not null, "webhook_url" text null, "paused" boolean not null, "last_checked_at" timestamptz(3) null, "last_error" text null, "failures" int not null, "checks" int not null, "created_at" timestamptz(3) not null)',
    );
    this.addSql('create index "subscriptions_account_id_created_at_id_index" on "subscriptions" ("account_id", "created_at", "id")');
    this.addSql('create table "subscription_items" ("subscription_id" varchar(36) not null, "identity" text not null, "seen_at" timestamptz(3) not null, "batch_id" varchar(36) null, primary key ("subscription_id", "identity"))');
    this.addSql('alter table "batches" add column "subscription_id" varchar(36) null');
    this.addSql('create index "batches_subscription_id_index" on "batches" ("subscription_id")');
  }
}
