import { Migration } from '@mikro-orm/migrations';

/** Subscriptions (each a Temporal Schedule), the archive of the items each has seen, and the subscription a batch was checked for. */
export class Migration20261202110000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create table `subscriptions` (`id` text not null primary key, `account_id` text not null, `url` text not null, `operation` text not null, `parameters` json not null, `check_every_seconds` integer not null, `start_after` datetime not null, `webhook_url` text null, `paused` integer not null, `last_checked_at` datetime null, `last_error` text null, `failures` integer not null, `checks` integer not null, `created_at` datetime not null)',
    );
    this.addSql('create index `subscriptions_account_id_created_at_id_index` on `subscriptions` (`account_id`, `created_at`, `id`)');
    this.addSql('create table `subscription_items` (`subscription_id` text not null, `identity` text not null, `seen_at` datetime not null, `batch_id` text null, primary key (`subscription_id`, `identity`))');
    this.addSql('alter table `batches` add column `subscription_id` text null');
    this.addSql('create index `batches_subscription_id_index` on `batches` (`subscription_id`)');
  }
}
