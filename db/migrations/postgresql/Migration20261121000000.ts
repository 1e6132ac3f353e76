import { Migration } from '@mikro-orm/migrations';

/** Initial schema: accounts, keys, usage, the credit ledger, jobs, rate-limit counters, server secrets. */
export class Migration20261121000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql("create table \"accounts\" (\"id\" varchar(36) not null, \"name\" varchar(255) not null, \"plan\" varchar(16) not null, \"webhook_secret\" varchar(255) not null, \"created_at\" timestamptz not null, constraint \"accounts_pkey\" primary key (\"id\"))");
    this.addSql("create table \"api_keys\" (\"id\" varchar(36) not null, \"account_id\" varchar(36) not null, \"name\" varchar(255) not null, \"prefix\" varchar(8) not null, \"hash\" varchar(64) not null, \"is_active\" boolean not null default true, \"created_at\" timestamptz not null, \"last_used_at\" timestamptz null, constraint \"api_keys_pkey\" primary key (\"id\"))");
    this.addSql("create index \"api_keys_account_id_index\" on \"api_keys\" (\"account_id\")");
    this.addSql("alter table \"api_keys\" add constraint \"api_keys_hash_unique\" unique (\"hash\")");
    this.addSql("create table \"api_key_usage\" (\"key_id\" varchar(36) not null, \"day\" varchar(10) not null, \"request_count\" int not null default 0, constraint \"api_key_usage_pkey\" primary key (\"key_id\", \"day\"))");
    this.addSql("create table \"credit_entries\" (\"id\" serial primary key, \"account_id\" varchar(36) not null, \"amount\" int not null, \"kind\" varchar(16) not null, \"job_id\" varchar(64) null, \"period\" varchar(7) null, \"note\" text null, \"created_at\" timestamptz not null)");
    this.addSql("create index \"credit_entries_account_id_index\" on \"credit_entries\" (\"account_id\")");
    this.addSql("alter table \"credit_entries\" add constraint \"credit_entries_job_id_kind_unique\" unique (\"job_id\", \"kind\")");
    this.addSql("alter table \"credit_entries\" add constraint \"credit_entries_account_id_period_unique\" unique (\"account_id\", \"period\")");
    this.addSql("create table \"jobs\" (\"id\" varchar(36) not null, \"account_id\" varchar(36) not null, \"job_type\" varchar(16) not null, \"status\" varchar(16) not null default 'pending', \"source_url\" text not null, \"parameters\" jsonb not null, \"credits_charged\" int not null, \"progress\" int null default 0, \"result_data\" jsonb null, \"output_file\" text null, \"error_message\" text null, \"webhook_url\" text null, \"created_at\" timestamptz(3) not null, \"started_at\" timestamptz null, \"completed_at\" timestamptz null, \"expires_at\" timestamptz null, constraint \"jobs_pkey\" primary key (\"id\"))");
    this.addSql("create index \"jobs_account_id_created_at_id_index\" on \"jobs\" (\"account_id\", \"created_at\", \"id\")");
    this.addSql("create table \"rate_limit_counters\" (\"bucket\" varchar(80) not null, \"window_start\" bigint not null, \"count\" int not null, constraint \"rate_limit_counters_pkey\" primary key (\"bucket\", \"window_start\"))");
    this.addSql("create table \"server_secrets\" (\"name\" varchar(64) not null, \"value\" text not null, constraint \"server_secrets_pkey\" primary key (\"name\"))");
  }
}
