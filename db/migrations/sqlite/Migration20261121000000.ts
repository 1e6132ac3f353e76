import { Migration } from '@mikro-orm/migrations';

/** Initial schema: accounts, keys, usage, the credit ledger, jobs, rate-limit counters, server secrets. */
export class Migration20261121000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql("create table `accounts` (`id` text not null, `name` text not null, `plan` text not null, `webhook_secret` text not null, `created_at` datetime not null, primary key (`id`))");
    this.addSql("create table `api_keys` (`id` text not null, `account_id` text not null, `name` text not null, `prefix` text not null, `hash` text not null, `is_active` integer not null default true, `created_at` datetime not null, `last_used_at` datetime null, primary key (`id`))");
    this.addSql("create index `api_keys_account_id_index` on `api_keys` (`account_id`)");
    this.addSql("create unique index `api_keys_hash_unique` on `api_keys` (`hash`)");
    this.addSql("create table `api_key_usage` (`key_id` text not null, `day` text not null, `request_count` integer not null default 0, primary key (`key_id`, `day`))");
    this.addSql("create table `credit_entries` (`id` integer not null primary key autoincrement, `account_id` text not null, `amount` integer not null, `kind` text not null, `job_id` text null, `period` text null, `note` text null, `created_at` datetime not null)");
    this.addSql("create index `credit_entries_account_id_index` on `credit_entries` (`account_id`)");
    this.addSql("create unique index `credit_entries_job_id_kind_unique` on `credit_entries` (`job_id`, `kind`)");
    this.addSql("create unique index `credit_entries_account_id_period_unique` on `credit_entries` (`account_id`, `period`)");
    this.addSql("create table `jobs` (`id` text not null, `account_id` text not null, `job_type` text not null, `status` text not null default 'pending', `source_url` text not null, `parameters` json not null, `credits_charged` integer not null, `progress` integer null default 0, `result_data` json null, `output_file` text null, `error_message` text null, `webhook_url` text null, `created_at` datetime not null, `started_at` datetime null, `completed_at` datetime null, `expires_at` datetime null, primary key (`id`))");
    this.addSql("create index `jobs_account_id_created_at_id_index` on `jobs` (`account_id`, `created_at`, `id`)");
    this.addSql("create table `rate_limit_counters` (`bucket` text not null, `window_start` bigint not null, `count` integer not null, primary key (`bucket`, `window_start`))");
    this.addSql("create table `server_secrets` (`name` text not null, `value` text not null, primary key (`name`))");
  }
}
