import { Migration } from '@mikro-orm/migrations';

/** Uploads: files accounts send instead of URLs, removed by the janitor when they expire. */
export class Migration20261126100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('create table "uploads" ("id" varchar(40) not null, "account_id" varchar(36) not null, "filename" text not null, "size" bigint not null, "content_type" varchar(128) not null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, constraint "uploads_pkey" primary key ("id"))');
    this.addSql('create index "uploads_expires_at_index" on "uploads" ("expires_at")');
  }
}
