import { Migration } from '@mikro-orm/migrations';

/** Uploads: files accounts send instead of URLs, removed by the janitor when they expire. */
export class Migration20261126100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('create table `uploads` (`id` text not null, `account_id` text not null, `filename` text not null, `size` integer not null, `content_type` text not null, `created_at` datetime not null, `expires_at` datetime not null, primary key (`id`))');
    this.addSql('create index `uploads_expires_at_index` on `uploads` (`expires_at`)');
  }
}
