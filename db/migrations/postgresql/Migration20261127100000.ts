import { Migration } from '@mikro-orm/migrations';
import { backfillFailureKinds } from '../failure-kinds';

/** Jobs record why they failed as a kind (failure_kind) beside the sentence (error_message). */
export class Migration20261127100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "jobs" add column "failure_kind" varchar(16) null');
    for (const sql of backfillFailureKinds('"')) this.addSql(sql);
  }
}
