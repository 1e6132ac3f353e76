import { Migration } from '@mikro-orm/migrations';

/** A job may have several output files: their names, sizes and content types, the first being output_file's. */
export class Migration20261128100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "jobs" add column "output_files" jsonb null');
  }
}
