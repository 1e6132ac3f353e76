import { Migration } from '@mikro-orm/migrations';

/** Batches: one collection's items, each run as an ordinary job that names its batch. */
export class Migration20261202100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create table `batches` (`id` text not null primary key, `account_id` text not null, `operation` text not null, `parameters` json not null, `source` json not null, `selection` json not null, `webhook_url` text null, `status` text not null, `error` text null, `note` text null, `credits_charged` integer not null, `created_at` datetime not null, `completed_at` datetime null)',
    );
    this.addSql('create index `batches_account_id_created_at_id_index` on `batches` (`account_id`, `created_at`, `id`)');
    this.addSql(
      'create table `batch_items` (`batch_id` text not null, `position` integer not null, `url` text not null, `identity` text not null, `title` text null, `published_at` datetime null, `duration` real null, `thumbnail` text null, `state` text not null, `job_id` text null, `reason` text null, primary key (`batch_id`, `position`))',
    );
    this.addSql('create index `batch_items_batch_id_state_position_index` on `batch_items` (`batch_id`, `state`, `position`)');
    this.addSql('alter table `jobs` add column `batch_id` text null');
    this.addSql('create index `jobs_batch_id_index` on `jobs` (`batch_id`)');
  }
}
