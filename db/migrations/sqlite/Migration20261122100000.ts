import { Migration } from '@mikro-orm/migrations';

/** Dashboard: account owners (email, scrypt password), one-time sign-in links, sessions, failed sign-in attempts. */
export class Migration20261122100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql("create table `account_owners` (`account_id` text not null, `email` text null, `password_hash` text null, `password_changed_at` datetime null, `created_at` datetime not null, primary key (`account_id`))");
    this.addSql("create unique index `account_owners_email_unique` on `account_owners` (`email`)");
    this.addSql("create table `dashboard_sessions` (`id_hash` text not null, `account_id` text null, `csrf_token` text not null, `flash` text null, `created_at` datetime not null, `expires_at` datetime not null, primary key (`id_hash`))");
    this.addSql("create index `dashboard_sessions_expires_at_index` on `dashboard_sessions` (`expires_at`)");
    this.addSql("create index `dashboard_sessions_account_id_index` on `dashboard_sessions` (`account_id`)");
    this.addSql("create table `login_links` (`token_hash` text not null, `account_id` text not null, `created_at` datetime not null, `expires_at` datetime not null, `used_at` datetime null, primary key (`token_hash`))");
    this.addSql("create index `login_links_expires_at_index` on `login_links` (`expires_at`)");
    this.addSql("create table `sign_in_attempts` (`id` integer not null primary key autoincrement, `bucket` text not null, `created_at` datetime not null)");
    this.addSql("create index `sign_in_attempts_bucket_created_at_index` on `sign_in_attempts` (`bucket`, `created_at`)");
  }
}
