import { Migration } from '@mikro-orm/migrations';

/** Idempotency-Key records for create calls. */
export class Migration20261121010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('create table "idempotency_keys" ("account_id" varchar(36) not null, "key" varchar(255) not null, "request_hash" varchar(64) not null, "status" int null, "response_body" text null, "created_at" timestamptz not null, constraint "idempotency_keys_pkey" primary key ("account_id", "key"))');
  }
}
