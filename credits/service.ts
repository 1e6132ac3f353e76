// The credit ledger and credits used per day by job type, for the signed-in account.
import type { EntityManager } from '@mikro-orm/core';
import type { Account } from '../accounts/entity';
import { listLedger, usageEntriesSince } from './repository';
import { afterCursor, page } from '../lib/cursor';
import { dayOf, lastDays } from '../lib/days';

export const LEDGER_PAGE_SIZE = 25;
export const USAGE_CHART_DAYS = 30;

/** One page of the ledger (charges, refunds, monthly top-ups, operator adjustments), newest first. */
export async function ledgerPage(em: EntityManager, account: Account, cursor: string | undefined) {
  const rows = await listLedger(em, account.id, cursor ? afterCursor(cursor) : null, LEDGER_PAGE_SIZE + 1);
  return page(rows, LEDGER_PAGE_SIZE);
}

/** Net credits used per UTC day over the last 30 days, one series per job type of `jobTypes` (the registry's) and `info` for metadata reads. */
export async function usagePerDay(em: EntityManager, account: Account, jobTypes: readonly string[], now = new Date()): Promise<{ days: string[]; series: { name: string; values: number[] }[] }> {
  const days = lastDays(USAGE_CHART_DAYS, now);
  const index = new Map(days.map((d, i) => [d, i]));
  const types = [...jobTypes, 'info'];
  const values = new Map(types.map((t) => [t, days.map(() => 0)]));
  for (const entry of await usageEntriesSince(em, account.id, new Date(`${days[0]}T00:00:00Z`))) {
    const i = index.get(dayOf(entry.at));
    const series = values.get(entry.jobType);
    if (i !== undefined && series) series[i]! += entry.used;
  }
  return { days, series: types.map((name) => ({ name, values: values.get(name)! })) };
}
