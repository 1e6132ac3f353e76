import { Migration } from '@mikro-orm/migrations';

/** Webhook endpoints and the delivery log. */
export class Migration20261121020000 extends Migration {
  override async up(): Promise<void> {
    this.addSql("create table `webhook_endpoints` (`id` integer not null primary key autoincrement, `account_id` text not null, `url` text not null, `secret` text not null, `events` json not null, `is_active` integer not null default true, `created_at` datetime not null)");
    this.addSql("create index `webhook_endpoints_account_id_index` on `webhook_endpoints` (`account_id`)");
    this.addSql("create table `webhook_deliveries` (`id` text not null, `delivery_id` text not null, `account_id` text not null, `webhook_id` integer null, `url` text not null, `event` text not null, `job_id` text not null, `attempt` integer not null, `status` text not null default 'pending', `status_code` integer null, `response_time_ms` integer null, `error` text null, `created_at` datetime not null, `next_attempt_at` datetime null, primary key (`id`))");
    this.addSql("create index `webhook_deliveries_webhook_id_created_at_id_index` on `webhook_deliveries` (`webhook_id`, `created_at`, `id`)");
    this.addSql("create index `webhook_deliveries_delivery_id_index` on `webhook_deliveries` (`delivery_id`)");
    this.addSql("create unique index `webhook_deliveries_delivery_id_attempt_unique` on `webhook_deliveries` (`delivery_id`, `attempt`)");
  }
}
