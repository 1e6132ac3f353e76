import type { EntityManager } from '@mikro-orm/core';
import { Account, PLANS } from '../accounts/entity';
import { CreditEntry } from './entity';
import { Job } from '../jobs/entity';
import { DomainError } from '../lib/errors';
import { onPostgres } from '../db/bound-drivers';

// The ledger (credit_entries) is the audit trail; accounts.balance is its running sum, changed only
// here and always in the same transaction as the entry it reflects, so balance = sum(ledger) holds at
// every commit and a charge never reads the whole ledger.

/** Current balance (accounts.balance, kept equal to the sum of the account's ledger entries). */
export async function getBalance(em: EntityManager, accountId: string): Promise<number> {
  const rows = (await em.getConnection().execute('select balance from accounts where id = ?', [accountId], 'all', em.getTransactionContext())) as { balance: number | string }[];
  return Number(rows[0]?.balance ?? 0);
}

/** The sum of the account's ledger entries (what the balance must equal; for checks and tests). */
export async function ledgerSum(em: EntityManager, accountId: string): Promise<number> {
  const rows = (await em
    .getConnection()
    .execute('select coalesce(sum(amount), 0) as balance from credit_entries where account_id = ?', [accountId], 'all', em.getTransactionContext())) as { balance: number | string }[];
  return Number(rows[0]?.balance ?? 0);
}

/** Moves the balance by `amount` with the ledger line just written (same transaction). */
async function applyToBalance(em: EntityManager, accountId: string, amount: number): Promise<void> {
  await em.getConnection().execute('update accounts set balance = balance + ? where id = ?', [amount, accountId], 'run', em.getTransactionContext());
}

/**
 * Serialises credit movements of one account for the rest of the transaction.
 * PostgreSQL takes a row lock; SQLite already serialises writers (one connection per process, a
 * database-wide write lock across processes), and this update takes that lock up front.
 */
export async function lockAccount(em: EntityManager, accountId: string): Promise<void> {
  const conn = em.getConnection();
  const sql = onPostgres(em)
    ? 'select id from accounts where id = ? for update'
    : 'update accounts set id = id where id = ?';
  await conn.execute(sql, [accountId], 'run', em.getTransactionContext());
}

function monthOf(d: Date): string {
  return d.toISOString().slice(0, 7);
}

/** True when this month's allowance has not been granted yet (a lookup on the (account, period) unique index). */
async function grantDue(em: EntityManager, accountId: string, now: Date): Promise<boolean> {
  return (await em.count(CreditEntry, { accountId, period: monthOf(now) })) === 0;
}

/**
 * Tops the account up to its plan's monthly allowance once per calendar month (unused credits do
 * not roll over; credits added by an operator above the allowance are kept). Must run under lockAccount.
 */
async function ensureMonthlyGrant(em: EntityManager, accountId: string, now: Date): Promise<void> {
  if (!(await grantDue(em, accountId, now))) return;
  const period = monthOf(now);
  const account = await em.findOneOrFail(Account, accountId);
  const amount = Math.max(0, PLANS[account.plan].monthlyCredits - (await getBalance(em, accountId)));
  em.create(CreditEntry, { accountId, amount, kind: 'grant', period, note: `monthly allowance ${period}`, jobId: null, createdAt: now });
  await em.flush();
  await applyToBalance(em, accountId, amount);
}

// "account:month" whose monthly grant a committed charge of this process has seen: a grant is never
// taken back, so a charge needs neither the grant check nor the lock it runs under for them again.
const grantsSeen = new Set<string>();

/** A charge of chargeCredits: `write` adds its rows (e.g. the job) to the transaction that charges it. */
interface Charge<T> {
  accountId: string;
  cost: number;
  what: string;
  write: (tx: EntityManager) => Promise<{ jobId: string | null; value: T }>;
}

/**
 * In one transaction: locks the account, applies the monthly grant, takes `cost` off the balance
 * only if it covers it (one conditional update; 402 otherwise), runs `write` (e.g. inserting the
 * job row) and appends the charge to the ledger. O(1) in the size of the ledger.
 *
 * On SQLite, charges that arrive while one commits share the next transaction (see ChargeQueue).
 */
export async function chargeCredits<T>(
  em: EntityManager,
  accountId: string,
  cost: number,
  what: string,
  write: (tx: EntityManager) => Promise<{ jobId: string | null; value: T }>,
): Promise<T> {
  const charge: Charge<T> = { accountId, cost, what, write };
  if (em.isInTransaction() || onPostgres(em)) {
    // PostgreSQL runs transactions side by side; a caller's own transaction must hold its charge
    const [outcome] = await chargeTogether(em, [charge]);
    if (!outcome!.ok) throw outcome!.error;
    return outcome!.value as T;
  }
  const connection = em.getConnection();
  let queue = chargeQueues.get(connection);
  // a fork of its own: the queue outlives the request whose entity manager created it
  if (!queue) chargeQueues.set(connection, (queue = new ChargeQueue(em.fork({ clear: true }))));
  return queue.add(charge);
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Charges in one transaction, each as chargeCredits describes; one the balance does not cover is
 * refused alone (its update changed nothing). Any other failure rolls the whole transaction back.
 */
async function chargeTogether(em: EntityManager, charges: Charge<unknown>[]): Promise<Outcome<unknown>[]> {
  const now = new Date();
  const seen: string[] = [];
  const outcomes = await em.transactional(async (tx) => {
    const out: Outcome<unknown>[] = [];
    for (const { accountId, cost, what, write } of charges) {
      const granted = `${accountId}:${monthOf(now)}`;
      // once this month's grant is in, the conditional update below is the first write and takes the lock
      if (!grantsSeen.has(granted)) {
        await lockAccount(tx, accountId);
        await ensureMonthlyGrant(tx, accountId, now);
      }
      seen.push(granted);
      const res = await tx.getConnection().execute('update accounts set balance = balance - ? where id = ? and balance >= ?', [cost, accountId, cost], 'run', tx.getTransactionContext());
      if (Number((res as { affectedRows?: number }).affectedRows ?? 0) === 0) {
        const balance = await getBalance(tx, accountId);
        out.push({ ok: false, error: new DomainError('insufficient_credits', `${what} costs ${cost} credit${cost === 1 ? '' : 's'} but the balance is ${balance}; add credits or upgrade the plan.`) });
        continue;
      }
      const { jobId, value } = await write(tx);
      tx.create(CreditEntry, { accountId, amount: -cost, kind: 'charge', jobId, period: null, note: what, createdAt: now });
      out.push({ ok: true, value });
    }
    await tx.flush();
    return out;
  });
  if (grantsSeen.size >= 10_000) grantsSeen.clear(); // a bound; an account missing here is only checked again
  for (const g of seen) grantsSeen.add(g);
  return outcomes;
}

/**
 * Group commit for SQLite's one connection. A transaction there holds the connection for a round
 * trip through the event loop per statement, so charges one at a time were 5 round trips each; the
 * charges that arrive while a transaction commits share the next one (its begin, flush and commit).
 * Should that shared transaction fail, each of its charges runs again alone, so one bad charge
 * fails only its own caller.
 */
class ChargeQueue {
  private waiting: { charge: Charge<unknown>; resolve(v: unknown): void; reject(e: unknown): void }[] = [];
  private draining = false;
  constructor(private readonly em: EntityManager) {}

  add<T>(charge: Charge<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ charge: charge as Charge<unknown>, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.waiting.length) {
        const batch = this.waiting.splice(0, MAX_CHARGES_PER_TRANSACTION);
        let outcomes: Outcome<unknown>[];
        try {
          outcomes = await chargeTogether(this.em.fork(), batch.map((b) => b.charge));
        } catch (err) {
          if (batch.length === 1) outcomes = [{ ok: false, error: err }];
          else {
            outcomes = [];
            for (const b of batch) outcomes.push(await chargeTogether(this.em.fork(), [b.charge]).then(([o]) => o!, (error: unknown) => ({ ok: false, error }) as const));
          }
        }
        batch.forEach((b, i) => {
          const o = outcomes[i]!;
          if (o.ok) b.resolve(o.value);
          else b.reject(o.error);
        });
      }
    } finally {
      this.draining = false;
    }
  }
}

const MAX_CHARGES_PER_TRANSACTION = 64;
const chargeQueues = new WeakMap<object, ChargeQueue>();

/** Refunds a job's charge. Idempotent: the (job_id, 'refund') unique key admits one refund ever. Returns true if it wrote one. */
export async function refundJob(em: EntityManager, accountId: string, jobId: string, amount: number, note = 'job failed'): Promise<boolean> {
  if (amount <= 0) return false;
  const refund = async (tx: EntityManager) => {
    const res = await tx
      .getConnection()
      .execute(
        `insert into credit_entries (account_id, amount, kind, job_id, period, note, created_at)
         values (?, ?, 'refund', ?, null, ?, ?)
         on conflict (job_id, kind) do nothing`,
        [accountId, amount, jobId, note, new Date()],
        'run',
        tx.getTransactionContext(),
      );
    const wrote = Number((res as { affectedRows?: number }).affectedRows ?? 0) > 0;
    if (wrote) await applyToBalance(tx, accountId, amount);
    return wrote;
  };
  // the ledger line and the balance move together: join the caller's transaction or open one
  return em.isInTransaction() ? refund(em) : em.transactional(refund);
}

/** Operator adjustment (positive or negative); never takes the balance below zero. Returns the new balance. */
export async function adjustCredits(em: EntityManager, accountId: string, amount: number, note: string): Promise<number> {
  return em.transactional(async (tx) => {
    await lockAccount(tx, accountId);
    await tx.findOneOrFail(Account, accountId);
    await ensureMonthlyGrant(tx, accountId, new Date());
    const balance = await getBalance(tx, accountId);
    if (balance + amount < 0) throw new Error(`cannot remove ${-amount} credits: the balance is ${balance}`);
    if (amount !== 0) {
      tx.create(CreditEntry, { accountId, amount, kind: 'adjust', jobId: null, period: null, note, createdAt: new Date() });
      await tx.flush();
      await applyToBalance(tx, accountId, amount);
    }
    return balance + amount;
  });
}

/** Balance after applying this month's grant if it is due; a plain read once the month's grant exists. */
export async function currentBalance(em: EntityManager, accountId: string): Promise<number> {
  if (!(await grantDue(em, accountId, new Date()))) return getBalance(em, accountId);
  return adjustCredits(em, accountId, 0, 'read');
}

/**
 * The monthly top-up for every account still without this month's allowance (run by a Temporal
 * Schedule at 00:00 UTC on the 1st; a charge or a balance read before it gets there grants it too).
 * Returns how many accounts were topped up.
 */
export async function grantMonthlyAllowances(em: EntityManager, now = new Date()): Promise<number> {
  let granted = 0;
  let after = '';
  for (;;) {
    const page = await em.fork().find(Account, { id: { $gt: after } }, { orderBy: { id: 'asc' }, limit: 500, fields: ['id'] });
    if (!page.length) return granted;
    for (const { id } of page) {
      if (!(await grantDue(em.fork(), id, now))) continue;
      // under the account's lock, like every credit movement; the (account, period) index keeps it once
      await em.fork().transactional(async (tx) => {
        await lockAccount(tx, id);
        await ensureMonthlyGrant(tx, id, now);
      });
      granted++;
    }
    after = page.at(-1)!.id;
  }
}

/** Net credits used since `since`, by job type (`info` for metadata reads): charges minus refunds. */
export async function usageByJobType(em: EntityManager, accountId: string, since: Date): Promise<Record<string, number>> {
  const rows = (await em.getConnection().execute(
    `select coalesce(j.job_type, 'info') as job_type, -sum(c.amount) as used
       from credit_entries c left join jobs j on j.id = c.job_id
      where c.account_id = ? and c.kind in ('charge', 'refund') and c.created_at >= ?
      group by coalesce(j.job_type, 'info')`,
    [accountId, since],
    'all',
  )) as { job_type: string; used: number | string }[];
  return Object.fromEntries(rows.map((r) => [r.job_type, Number(r.used)]));
}

/** A page of the account's ledger, newest first by (created_at, id); `after` continues from a keyset cursor's where-clause. */
export function listLedger(em: EntityManager, accountId: string, after: Record<string, unknown> | null, limit: number): Promise<CreditEntry[]> {
  return em.find(CreditEntry, { accountId, ...(after ?? {}) }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
}

/** Each charge and refund since `since` with its job type (`info` for metadata reads), as credits used (a refund is negative). */
export async function usageEntriesSince(em: EntityManager, accountId: string, since: Date): Promise<{ at: Date; jobType: string; used: number }[]> {
  const entries = await em.find(CreditEntry, { accountId, kind: { $in: ['charge', 'refund'] }, createdAt: { $gte: since } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const jobIds = [...new Set(entries.map((e) => e.jobId).filter((id): id is string => id !== null))];
  const jobs = jobIds.length ? await em.find(Job, { id: { $in: jobIds }, accountId }, { fields: ['id', 'jobType'] }) : [];
  const typeOf = new Map(jobs.map((j) => [j.id, j.jobType as string]));
  return entries.map((e) => ({ at: e.createdAt, jobType: (e.jobId && typeOf.get(e.jobId)) || 'info', used: -e.amount }));
}
