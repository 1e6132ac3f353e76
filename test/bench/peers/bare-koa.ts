// The bench's bare peers, each in its own process like the product's API:
//   json FILE    a Koa app answering every GET with the JSON in FILE (the peer of GET /v1/jobs/{id})
//   insert FILE  a Koa app that, per POST, inserts a job row and a ledger row in one SQLite
//                transaction (better-sqlite3 as the product, WAL, synchronous=NORMAL) and answers 202
//                (the peer of an accepted create)
// Prints "listening PORT" once it listens.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import Database from 'better-sqlite3';

async function main(): Promise<void> {
  const [mode, file] = process.argv.slice(2);
  const app = new Koa();
  if (mode === 'json') {
    const body = JSON.parse(fs.readFileSync(file!, 'utf8')) as unknown;
    app.use((ctx) => {
      ctx.body = body;
    });
  } else if (mode === 'insert') {
    const db = new Database(file!);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('create table if not exists jobs (id text primary key, account_id text not null, job_type text not null, status text not null, source_url text not null, parameters text not null, credits_charged integer not null, created_at integer not null)');
    db.exec('create table if not exists credit_entries (id integer primary key autoincrement, account_id text not null, amount integer not null, kind text not null, job_id text, created_at integer not null, unique (job_id, kind))');
    const insertJob = db.prepare('insert into jobs values (?, ?, ?, ?, ?, ?, ?, ?)');
    const insertCharge = db.prepare("insert into credit_entries (account_id, amount, kind, job_id, created_at) values (?, -1, 'charge', ?, ?)");
    const create = db.transaction((id: string, url: string, body: unknown, now: number) => {
      insertJob.run(id, 'acct', 'fingerprint', 'pending', url, JSON.stringify(body), 1, now);
      insertCharge.run('acct', id, now);
    });
    app.use(bodyParser());
    app.use((ctx) => {
      const { url } = ctx.request.body as { url: string };
      const id = crypto.randomUUID();
      const now = Date.now();
      create(id, url, ctx.request.body, now);
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
