import { Migration } from '@mikro-orm/migrations';

/** Webhook endpoints and the delivery log. */
export class Migration20261121020000 extends Migration {
  override async up(): Promise<void> {
    this.addSql("create table \"webhook_endpoints\" (\"id\" serial primary key, \"account_id\" varchar(36) not null, \"url\" text not null, \"secret\" varchar(255) not null, \"events\" jsonb not null, \"is_active\" boolean not null default true, \"created_at\" timestamptz not null)");
    this.addSql("create index \"webhook_endpoints_account_id_index\" on \"webhook_endpoints\" (\"account_id\")");
    this.addSql("create table \"webhook_deliveries\" (\"id\" varchar(36) not null, \"delivery_id\" varchar(120) not null, \"account_id\" varchar(36) not null, \"webhook_id\" int null, \"url\" text not null, \"event\" varchar(32) not null, \"job_id\" varchar(36) not null, \"attempt\" int not null, \"status\" varchar(16) not null default 'pending', \"status_code\" int null, \"response_time_ms\" int null, \"error\" text null, \"created_at\" timestamptz(3) not null, \"next_attempt_at\" timestamptz null, constraint \"webhook_deliveries_pkey\" primary key (\"id\"))");
    this.addSql("create index \"webhook_deliveries_webhook_id_created_at_id_index\" on \"webhook_deliveries\" (\"webhook_id\", \"created_at\", \"id\")");
    this.addSql("create index \"webhook_deliveries_delivery_id_index\" on \"webhook_deliveries\" (\"delivery_id\")");
    this.addSql("alter table \"webhook_deliveries\" add constraint \"webhook_deliveries_delivery_id_attempt_unique\" unique (\"delivery_id\", \"attempt\")");
  }
}
