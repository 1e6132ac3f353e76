import sqlite3 from 'sqlite3';

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
  const rows = await querySqlite<{ job_id: string; kind: string; n: number }>(dbFile, 'select job_id, kind, count(*) as n from credit_entries where job_id is not null group by job_id, kind');
  const out = new Map<string, JobLedger>();
  for (const row of rows) {
    const e = out.get(row.job_id) ?? { charges: 0, refunds: 0 };
    if (row.kind === 'charge') e.charges = row.n;
    if (row.kind === 'refund') e.refunds = row.n;
    out.set(row.job_id, e);
  }
  return out;
}
