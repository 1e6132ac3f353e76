import { Migration } from '@mikro-orm/migrations';

/** Batches: one collection's items, each run as an ordinary job that names its batch. */
export class Migration20261202100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create table "batches" ("id" varchar(36) not null primary key, "account_id" varchar(36) not null, "operation" varchar(16) not null, "parameters" jsonb not null, "source" jsonb not null, "selection" jsonb not null, "webhook_url" text null, "status" varchar(16) not null, "error" text null, "note" text null, "credits_charged" int not null, "created_at" timestamptz(3) not null, "completed_at" timestamptz(3) null)',
    );
    this.addSql('create index "batches_account_id_created_at_id_index" on "batches" ("account_id", "created_at", "id")');
    this.addSql(
      'create table "batch_items" ("batch_id" varchar(36) not null, "position" int not null, "url" text not null, "identity" text not null, "title" text null, "published_at" timestamptz(3) null, "duration" double precision null, "thumbnail" text null, "state" varchar(16) not null, "job_id" varchar(36) null, "reason" text null, primary key ("batch_id", "position"))',
    );
    this.addSql('create index "batch_items_batch_id_state_position_index" on "batch_items" ("batch_id", "state", "position")');
    this.addSql('alter table "jobs" add column "batch_id" varchar(36) null');
    this.addSql('create index "jobs_batch_id_index" on "jobs" ("batch_id")');
  }
}
