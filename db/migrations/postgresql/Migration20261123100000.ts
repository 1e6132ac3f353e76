import { Migration } from '@mikro-orm/migrations';

/** accounts.balance: the running sum of the account's ledger, kept in the same transaction as each entry; backfilled from the ledger. */
export class Migration20261123100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "accounts" add column "balance" int not null default 0');
    // no ledger line may commit between the backfill's snapshot and this migration's commit
    this.addSql('lock table "credit_entries" in share mode');
    this.addSql('update "accounts" set "balance" = coalesce((select sum("c"."amount") from "credit_entries" "c" where "c"."account_id" = "accounts"."id"), 0)');
  }
}
