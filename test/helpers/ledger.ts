import sqlite3 from 'sqlite3';
import { pgRows } from './postgres';

export interface JobLedger {
  charges: number;
  refunds: number;
}

/** Runs one read-only query on a service's SQLite database (tests read the ledger directly). */
export async function querySqlite<T>(dbFile: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const db = new sqlite3.Database(dbFile, sqlite3.OPEN_READONLY);
  try {
    return await new Promise<T[]>((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
  } finally {
    await new Promise<void>((r) => db.close(() => r()));
  }
}

/** Each job's charge and refund rows, straight from the ledger. */
export async function ledgerByJob(dbFile: string): Promise<Map<string, JobLedger>> {
  return ledgerOf(await querySqlite<{ job_id: string; kind: string; n: number }>(dbFile, LEDGER_SQL));
}

/** The same, from a service's PostgreSQL database. */
export async function ledgerByJobOnPostgres(url: string): Promise<Map<string, JobLedger>> {
  return ledgerOf(await pgRows<{ job_id: string; kind: string; n: number | string }>(url, LEDGER_SQL));
}

const LEDGER_SQL = 'select job_id, kind, count(*) as n from credit_entries where job_id is not null group by job_id, kind';

function ledgerOf(rows: { job_id: string; kind: string; n: number | string }[]): Map<string, JobLedger> {
  const out = new Map<string, JobLedger>();
  for (const row of rows) {
    const e = out.get(row.job_id) ?? { charges: 0, refunds: 0 };
    if (row.kind === 'charge') e.charges = Number(row.n);
    if (row.kind === 'refund') e.refunds = Number(row.n);
    out.set(row.job_id, e);
  }
  return out;
}
