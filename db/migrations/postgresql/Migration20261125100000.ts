import { Migration } from '@mikro-orm/migrations';

/** An account's jobs by status: slot claims and the account's running and queued counts read it on every job. */
export class Migration20261125100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index "jobs_account_id_status_created_at_index" on "jobs" ("account_id", "status", "created_at")');
  }
}
