import { EntitySchema } from '@mikro-orm/core';

export type CreditKind = 'grant' | 'charge' | 'refund' | 'adjust';

/** One append-only ledger line; an account's balance is the sum of its entries. */
export class CreditEntry {
  id!: number;
  accountId!: string;
  amount!: number;
  kind!: CreditKind;
  /** Set for charge and refund; (jobId, kind) is unique, so a job is charged and refunded at most once. */
  jobId: string | null = null;
  /** `YYYY-MM` for monthly grants; (accountId, period) is unique. */
  period: string | null = null;
  note: string | null = null;
  createdAt: Date = new Date();
}

export const CreditEntryEntitySchema = new EntitySchema<CreditEntry>({
  class: CreditEntry,
  tableName: 'credit_entries',
  uniques: [{ properties: ['jobId', 'kind'] }, { properties: ['accountId', 'period'] }],
  indexes: [{ properties: ['accountId'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    accountId: { type: 'string', length: 36 },
    amount: { type: 'integer' },
    kind: { type: 'string', length: 16 },
    jobId: { type: 'string', length: 64, nullable: true },
    period: { type: 'string', length: 7, nullable: true },
    note: { type: 'text', nullable: true },
    createdAt: { type: 'datetime' },
  },
});
