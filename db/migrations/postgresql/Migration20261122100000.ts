import { Migration } from '@mikro-orm/migrations';

/** Dashboard: account owners (email, scrypt password), one-time sign-in links, sessions, failed sign-in attempts. */
export class Migration20261122100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql("create table \"account_owners\" (\"account_id\" varchar(36) not null, \"email\" varchar(254) null, \"password_hash\" varchar(255) null, \"password_changed_at\" timestamptz null, \"created_at\" timestamptz not null, constraint \"account_owners_pkey\" primary key (\"account_id\"))");
    this.addSql("alter table \"account_owners\" add constraint \"account_owners_email_unique\" unique (\"email\")");
    this.addSql("create table \"dashboard_sessions\" (\"id_hash\" varchar(64) not null, \"account_id\" varchar(36) null, \"csrf_token\" varchar(64) not null, \"flash\" text null, \"created_at\" timestamptz not null, \"expires_at\" timestamptz not null, constraint \"dashboard_sessions_pkey\" primary key (\"id_hash\"))");
    this.addSql("create index \"dashboard_sessions_expires_at_index\" on \"dashboard_sessions\" (\"expires_at\")");
    this.addSql("create index \"dashboard_sessions_account_id_index\" on \"dashboard_sessions\" (\"account_id\")");
    this.addSql("create table \"login_links\" (\"token_hash\" varchar(64) not null, \"account_id\" varchar(36) not null, \"created_at\" timestamptz not null, \"expires_at\" timestamptz not null, \"used_at\" timestamptz null, constraint \"login_links_pkey\" primary key (\"token_hash\"))");
    this.addSql("create index \"login_links_expires_at_index\" on \"login_links\" (\"expires_at\")");
    this.addSql("create table \"sign_in_attempts\" (\"id\" serial primary key, \"bucket\" varchar(300) not null, \"created_at\" timestamptz not null)");
    this.addSql("create index \"sign_in_attempts_bucket_created_at_index\" on \"sign_in_attempts\" (\"bucket\", \"created_at\")");
  }
}
