import { Migration } from '@mikro-orm/migrations';

/** Idempotency-Key records for create calls. */
export class Migration20261121010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql("create table `idempotency_keys` (`account_id` text not null, `key` text not null, `request_hash` text not null, `status` integer null, `response_body` text null, `created_at` datetime not null, primary key (`account_id`, `key`))");
  }
}
