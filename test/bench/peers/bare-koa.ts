// The bench's bare peers, each in its own process like the product's API:
//   json FILE    a Koa app answering every GET with the JSON in FILE (the peer of GET /v1/jobs/{id})
//   insert FILE  a Koa app that, per POST, inserts a job row and a ledger row in one SQLite
//                transaction (WAL, synchronous=NORMAL) and answers 202 (the peer of an accepted create)
// Prints "listening PORT" once it listens.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import sqlite3 from 'sqlite3';

function run(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (err) => (err ? reject(err) : resolve())));
}

async function main(): Promise<void> {
  const [mode, file] = process.argv.slice(2);
  const app = new Koa();
  if (mode === 'json') {
    const body = JSON.parse(fs.readFileSync(file!, 'utf8')) as unknown;
    app.use((ctx) => {
      ctx.body = body;
    });
  } else if (mode === 'insert') {
    const db = new sqlite3.Database(file!);
    await run(db, 'PRAGMA journal_mode = WAL');
    await run(db, 'PRAGMA synchronous = NORMAL');
    await run(db, 'create table if not exists jobs (id text primary key, account_id text not null, job_type text not null, status text not null, source_url text not null, parameters text not null, credits_charged integer not null, created_at integer not null)');
    await run(db, 'create table if not exists credit_entries (id integer primary key autoincrement, account_id text not null, amount integer not null, kind text not null, job_id text, created_at integer not null, unique (job_id, kind))');
    // one connection: transactions must not interleave, so they queue here
    let tail: Promise<unknown> = Promise.resolve();
    const serial = <T>(fn: () => Promise<T>): Promise<T> => {
      const next = tail.then(fn, fn);
      tail = next.catch(() => undefined);
      return next;
    };
    app.use(bodyParser());
    app.use(async (ctx) => {
      const { url } = ctx.request.body as { url: string };
      const id = crypto.randomUUID();
      const now = Date.now();
      await serial(async () => {
        await run(db, 'begin immediate');
        try {
          await run(db, 'insert into jobs values (?, ?, ?, ?, ?, ?, ?, ?)', [id, 'acct', 'fingerprint', 'pending', url, JSON.stringify(ctx.request.body), 1, now]);
          await run(db, "insert into credit_entries (account_id, amount, kind, job_id, created_at) values (?, -1, 'charge', ?, ?)", ['acct', id, now]);
          await run(db, 'commit');
        } catch (err) {
          await run(db, 'rollback');
          throw err;
        }
      });
      ctx.status = 202;
      ctx.body = { job_id: id, status: 'pending', credits_charged: 1, job_type: 'fingerprint', created_at: new Date(now).toISOString() };
    });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  const server = app.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
