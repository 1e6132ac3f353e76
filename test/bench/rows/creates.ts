// Accepted creates per second: POST /v1/fingerprint at 16 connections on `serve` (its workers
// running), on a fresh account and on one with a large ledger; beside bare Temporal
// `workflow.start` and a bare Koa + SQLite insert of a job row and a ledger row.
//
// The created jobs are not the subject here: after each run their workflows are terminated and the
// rows marked failed, so the next row starts on an idle stack.
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { createAccount } from '../../../accounts/repository';
import { coresFigures, coresLine, coresWhile, fmt, groupTools, load, startPeer, type BenchContext, type BenchRow, type CoresUsed } from '../harness';

const CONNECTIONS = 16;
const LEDGER_ROWS = Number(process.env.BENCH_LEDGER_ROWS ?? 1_000_000);
let bigAccount = '';
let peer: Awaited<ReturnType<typeof startPeer>> | null = null;

/** Seeds `n` ledger rows (net zero, so the balance is unchanged) straight into the database. */
async function seedLedger(ctx: BenchContext, accountId: string, n: number): Promise<void> {
  const conn = ctx.orm.em.getConnection();
  const half = Math.floor(n / 2);
  for (const amount of [1, -1]) {
    await conn.execute(
      `with recursive seq(i) as (select 1 union all select i + 1 from seq where i < ?)
       insert into credit_entries (account_id, amount, kind, job_id, period, note, created_at)
       select ?, ?, 'adjust', null, null, 'bench seed', ? from seq`,
      [half, accountId, amount, Date.now() - 86_400_000],
      'run',
    );
  }
  // fold the seed's write-ahead log into the database now, not during the first round's requests
  await conn.execute('pragma wal_checkpoint(TRUNCATE)', [], 'run');
}

/**
 * Ends the runs' workflows and marks their jobs failed, so they cost the next rows nothing. Returns
 * how many had no workflow yet when the load ended (accepted, but still in the dispatcher's queue).
 */
async function discard(ctx: BenchContext, jobIds: string[]): Promise<number> {
  const queue = [...jobIds];
  let unstarted = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        // the dispatcher may not have started it yet: wait for it (up to 30 s)
        for (let tries = 0; tries < 150; tries++) {
          try {
            await ctx.temporal.workflow.getHandle(`job-${id}`).terminate('bench: discarded');
            break;
          } catch (err) {
            if (!(err instanceof WorkflowNotFoundError)) break; // already ended
            if (tries === 0) unstarted++;
            await new Promise((r) => setTimeout(r, 200));
          }
        }
      }
    }),
  );
  // an activity already running when its workflow ended may still mark the job processing: settle
  // the rows until no tool of the discarded jobs is left running
  const conn = ctx.orm.em.getConnection();
  const pgid = ctx.stack.svc.child.pid!;
  for (let clean = 0, deadline = Date.now() + 120_000; clean < 3 && Date.now() < deadline; ) {
    for (let i = 0; i < jobIds.length; i += 500) {
      const ids = jobIds.slice(i, i + 500);
      await conn.execute(`update jobs set status = 'failed', error_message = 'bench: discarded' where status in ('pending', 'processing') and id in (${ids.map(() => '?').join(',')})`, ids, 'run');
    }
    clean = groupTools(pgid).length === 0 ? clean + 1 : 0;
    await new Promise((r) => setTimeout(r, 500));
  }
  return unstarted;
}

async function creates(ctx: BenchContext, accountId: string, seconds = ctx.seconds): Promise<{ perSecond: number; p50: number; other: number; cores: CoresUsed; unstarted: number }> {
  const keys = await Promise.all(Array.from({ length: CONNECTIONS }, () => ctx.newKey(accountId)));
  const ids: string[] = [];
  const body = JSON.stringify({ url: ctx.files.url('clip10.mp4') });
  const { result: res, cores } = await coresWhile(ctx.stack.svc.child.pid!, () =>
    load({
      url: `${ctx.stack.base}/v1/fingerprint`,
      method: 'POST',
      connections: CONNECTIONS,
      seconds,
      headers: (i) => ({ authorization: `Bearer ${keys[i]}` }),
      body: () => body,
      onResponse: (status, text) => {
        if (status === 202) ids.push((JSON.parse(text) as { job_id: string }).job_id);
      },
    }),
  );
  const unstarted = await discard(ctx, ids);
  const accepted = res.statuses[202] ?? 0;
  return { perSecond: accepted / seconds, p50: res.p50Ms, other: res.requests - accepted, cores, unstarted };
}

const row: BenchRow = {
  name: 'creates',
  order: 20,
  async setup(ctx) {
    const account = await createAccount(ctx.orm.em.fork(), 'bench-big-ledger', 'enterprise');
    bigAccount = account.id;
    const t0 = Date.now();
    await seedLedger(ctx, bigAccount, LEDGER_ROWS);
    console.log(`creates: seeded ${LEDGER_ROWS.toLocaleString('en')} ledger rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    peer = await startPeer('bare-koa.js', ['insert', path.join(ctx.work, 'peer-insert.sqlite')]);
    // unmeasured warm-up (JIT, first workflow starts), like the job read's
    await creates(ctx, ctx.stack.accountId, 2);
    await ctx.quiesce();
  },
  async measure(ctx) {
    const fresh = await creates(ctx, ctx.stack.accountId);
    await ctx.quiesce();
    const big = await creates(ctx, bigAccount);
    await ctx.quiesce();
    const started: string[] = [];
    const t0 = performance.now();
    const from = t0 + 500;
    const to = from + ctx.seconds * 1000;
    let temporalStarts = 0;
    const bareStarts = await coresWhile(ctx.stack.svc.child.pid!, () => Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < to) {
          const start = performance.now();
          const id = `bench-noop-${crypto.randomUUID()}`;
          // a workflow type no worker polls for: only the start is measured; it times out by itself
          await ctx.temporal.workflow.start('benchNoop', { taskQueue: 'bench-noop', workflowId: id, args: [], workflowExecutionTimeout: '1 minute' });
          const end = performance.now();
          if (end >= from && end <= to && start >= t0) temporalStarts++;
          started.push(id);
        }
      }),
    ));
    const insert = await load({ url: `http://127.0.0.1:${peer!.port}/v1/fingerprint`, method: 'POST', connections: CONNECTIONS, seconds: ctx.seconds, body: () => JSON.stringify({ url: ctx.files.url('clip10.mp4') }) });
    return {
      fresh: fresh.perSecond,
      freshP50: fresh.p50,
      freshOther: fresh.other,
      freshUnstarted: fresh.unstarted,
      ...coresFigures(fresh.cores),
      big: big.perSecond,
      bigP50: big.p50,
      bigOther: big.other,
      bigUnstarted: big.unstarted,
      temporal: temporalStarts / ctx.seconds,
      // Temporal's CPU per bare start: the server's share of what one job's start costs
      temporalCpuPerStart: (bareStarts.cores.temporal * bareStarts.seconds * 1000) / started.length,
      insert: (insert.statuses[202] ?? 0) / ctx.seconds,
    };
  },
  report: (m) => [
    {
      what: `\`POST /v1/fingerprint\` accepted, ${CONNECTIONS} connections, \`serve\` (API + workers)`,
      product: `${fmt.rate(m.fresh!, 'jobs/s')}, p50 ${fmt.ms(m.freshP50!)}`,
      peer: `bare Temporal \`workflow.start\`: ${fmt.rate(m.temporal!, '/s')}`,
      ratio: fmt.ratio(m.fresh!, m.temporal!),
    },
    { what: '(same)', product: '', peer: `Koa + SQLite insert of job + ledger row: ${fmt.rate(m.insert!, '/s')}`, ratio: fmt.ratio(m.fresh!, m.insert!) },
    {
      what: `(same) CPU cores used during the run, of ${os.availableParallelism()}`,
      product: coresLine(m),
      peer: `CPU per accepted job: serve ${fmt.ms((m.cores_serve! * 1000) / m.fresh!)}, Temporal ${fmt.ms((m.cores_temporal! * 1000) / m.fresh!)} (a bare start: ${fmt.ms(m.temporalCpuPerStart!)})`,
      ratio: '',
    },
    {
      what: `Same, on an account with ${LEDGER_ROWS.toLocaleString('en')} ledger rows`,
      product: `${fmt.rate(m.big!, 'jobs/s')}, p50 ${fmt.ms(m.bigP50!)}`,
      peer: `a fresh account: ${fmt.rate(m.fresh!, 'jobs/s')}`,
      ratio: fmt.ratio(m.big!, m.fresh!),
    },
  ],
  async teardown() {
    await peer?.stop();
  },
};

export const rows = [row];
