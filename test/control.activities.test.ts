import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createJobLifecycleActivities } from '../jobs/lifecycle.activities';
import { Job } from '../jobs/entity';
import { Upload } from '../uploads/entity';
import { adjustCredits, chargeCredits, grantMonthlyAllowances, ledgerSum } from '../credits/repository';
import { findAccountJob, jobCountsByPlan, readAccountJob } from '../jobs/repository';
import { startApiHarness, type ApiHarness } from './helpers/api-harness';
import { runActivity } from './helpers/activity-env';
import { readRows } from '../db/bound-drivers';

for (const dialect of ['sqlite', 'postgresql'] as const) {
  describe(`control activities on ${dialect}`, () => {
    let h: ApiHarness;
    before(async () => {
      h = await startApiHarness(dialect);
    });
    after(async () => {
      await h?.close();
    });

    async function newJob(cost = 2): Promise<{ accountId: string; jobId: string }> {
      const a = await h.newAccount();
      const jobId = crypto.randomUUID();
      await chargeCredits(h.orm.em.fork(), a.accountId, cost, 'test job', async (tx) => {
        tx.create(Job, { id: jobId, accountId: a.accountId, jobType: 'download', status: 'pending', sourceUrl: 'http://x/', parameters: {}, creditsCharged: cost, resultData: null, createdAt: new Date() });
        return { jobId, value: null };
      });
      return { accountId: a.accountId, jobId };
    }

    const acts = () => createJobLifecycleActivities({ orm: h.orm, storage: h.storage, config: { downloadUrlTtlMinutes: 60 } });

    it('charges that arrive together: each one the balance covers is taken once with its row, the rest refused, and a charge whose write fails fails alone', async () => {
      const [a, b, c] = [await h.newAccount('starter', 10), await h.newAccount('starter', 4), await h.newAccount('starter', 10)];
      const existing = (await newJob()).jobId;
      const charge = (accountId: string, jobId: string) =>
        chargeCredits(h.orm.em.fork(), accountId, 3, 'test job', async (tx) => {
          tx.create(Job, { id: jobId, accountId, jobType: 'download', status: 'pending', sourceUrl: 'http://x/', parameters: {}, creditsCharged: 3, resultData: null, createdAt: new Date() });
          return { jobId, value: jobId };
        }).then(
          (v) => ({ ok: true as const, v }),
          (err: Error & { kind?: string }) => ({ ok: false as const, message: err.message, kind: err.kind }),
        );
      // 5 charges of 3 on 10 credits, 3 on 4, and amid them one whose row collides with an existing job's id
      const results = await Promise.all([
        ...Array.from({ length: 5 }, () => charge(a.accountId, crypto.randomUUID())),
        charge(c.accountId, existing),
        ...Array.from({ length: 3 }, () => charge(b.accountId, crypto.randomUUID())),
      ]);
      const [ofA, collided, ofB] = [results.slice(0, 5), results[5]!, results.slice(6)];
      assert.equal(ofA.filter((r) => r.ok).length, 3, JSON.stringify(ofA));
      assert.ok(ofA.filter((r) => !r.ok).every((r) => !r.ok && r.kind === 'insufficient_credits'), JSON.stringify(ofA));
      assert.equal(collided.ok, false, JSON.stringify(collided));
      assert.notEqual(!collided.ok && collided.kind, 'insufficient_credits', JSON.stringify(collided));
      assert.equal(ofB.filter((r) => r.ok).length, 1, JSON.stringify(ofB));
      for (const [acct, left] of [[a, 1], [b, 1], [c, 10]] as const) {
        assert.equal(await h.balance(acct.accountId), left);
        assert.equal(await ledgerSum(h.orm.em.fork(), acct.accountId), left, 'the balance is the sum of the ledger');
      }
      // every taken charge has its job row, and no refused one has
      for (const r of [...ofA, ...ofB]) assert.equal(Boolean(await h.orm.em.fork().findOne(Job, r.ok ? r.v : '00000000-0000-0000-0000-000000000000')), r.ok);
      const jobs = (await h.orm.em.getConnection().execute('select count(*) as n from jobs where account_id in (?, ?, ?)', [a.accountId, b.accountId, c.accountId])) as { n: number | string }[];
      assert.equal(Number(jobs[0]!.n), 4);
    });

    it('failJob marks the job failed and refunds exactly once, however often it is retried', async () => {
      const { accountId, jobId } = await newJob();
      assert.equal(await h.balance(accountId), 998);
      await runActivity(acts().markProcessing, jobId);
      const ends = await Promise.all([1, 2, 3].map(() => runActivity(acts().failJob, { jobId, errorMessage: 'The source is not available' })));
      assert.ok(ends.every((e) => e.status === 'failed'));
      assert.equal(await h.balance(accountId), 1000);
      const job = await h.orm.em.fork().findOneOrFail(Job, jobId);
      assert.equal(job.status, 'failed');
      assert.equal(job.errorMessage, 'The source is not available');
      assert.ok(job.completedAt);
      const refunds = (await h.orm.em.getConnection().execute("select count(*) as n from credit_entries where job_id = ? and kind = 'refund'", [jobId])) as { n: number | string }[];
      assert.equal(Number(refunds[0]!.n), 1);
    });

    it('the plain job read gives every field exactly as the ORM reads it, and nothing for another account', async () => {
      const { accountId, jobId } = await newJob();
      const em = h.orm.em.fork();
      const job = await em.findOneOrFail(Job, jobId);
      Object.assign(job, {
        status: 'completed', progress: 100, parameters: { start: 1.5, nested: { a: [1, 'é'] } }, resultData: { width: 640, note: 'ok' },
        outputFile: 'out/x.mp4', errorMessage: null, webhookUrl: 'https://hooks.example/x',
        startedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), completedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 9, 1)), expiresAt: new Date(Date.UTC(2026, 0, 3)),
      });
      await em.flush();
      const viaOrm = await findAccountJob(h.orm.em.fork(), accountId, jobId.toUpperCase());
      const plain = await readAccountJob(h.orm.em.fork(), accountId, jobId.toUpperCase());
      assert.ok(viaOrm && plain);
      assert.deepEqual({ ...plain }, { ...viaOrm });
      assert.ok(plain instanceof Job && plain.createdAt instanceof Date && plain.completedAt instanceof Date);
      assert.equal(await readAccountJob(h.orm.em.fork(), (await h.newAccount()).accountId, jobId), null);
      assert.equal(await readAccountJob(h.orm.em.fork(), accountId, 'not-a-job-id'), null);
    });

    it('a read on the reading connection that fails is an error of that read alone: the next reads go on', async () => {
      const { jobId } = await newJob();
      for (let i = 0; i < 2; i++) await assert.rejects(readRows(h.orm.em, 'select no_such_column from jobs where id = ?', [jobId]), /no_such_column/);
      assert.deepEqual((await readRows(h.orm.em, 'select id from jobs where id = ?', [jobId])).map((r) => r.id), [jobId]);
    });

    it('the monthly top-up (the schedule\'s activity) tops each account up to its allowance once per month', async () => {
      const { accountId } = await h.newAccount();
      const full = await h.balance(accountId);
      await adjustCredits(h.orm.em.fork(), accountId, -10, 'spent');
      const now = new Date();
      const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 5));
      assert.ok((await grantMonthlyAllowances(h.orm.em.fork(), nextMonth)) >= 1);
      assert.equal(await grantMonthlyAllowances(h.orm.em.fork(), nextMonth), 0, 'nothing left to grant that month');
      const grants = (await h.orm.em.getConnection().execute("select amount, period from credit_entries where account_id = ? and kind = 'grant' order by id", [accountId])) as { amount: number | string; period: string }[];
      assert.deepEqual(grants.map((g) => [Number(g.amount), g.period]), [[full, now.toISOString().slice(0, 7)], [10, nextMonth.toISOString().slice(0, 7)]]);
    });

    it('completeJob stores the result with an expiry, removes scratch files, and is idempotent', async () => {
      const { accountId, jobId } = await newJob(1);
      await runActivity(acts().markProcessing, jobId);
      const work = h.storage.workDirOf(jobId);
      fs.mkdirSync(path.join(work, 'download'), { recursive: true });
      fs.writeFileSync(path.join(work, 'download', 'source.mp4'), 'x');
      const output = { outputFile: `${jobId}/output.mp4`, moreFiles: [`${jobId}/output.en.srt`], resultData: { title: 't', duration: 1, format: 'mp4', filesize: 1 } };
      fs.mkdirSync(path.dirname(h.storage.outputPath(output.outputFile)), { recursive: true });
      fs.writeFileSync(h.storage.outputPath(output.outputFile), 'x');
      fs.writeFileSync(h.storage.outputPath(output.moreFiles[0]!), '1\n00:00:00,000 --> 00:00:01,000\nHi\n');
      await runActivity(acts().completeJob, { jobId, output });
      await runActivity(acts().completeJob, { jobId, output });
      assert.equal(fs.existsSync(work), false);
      const job = await h.orm.em.fork().findOneOrFail(Job, jobId);
      assert.equal(job.status, 'completed');
      assert.equal(job.progress, 100);
      assert.deepEqual(job.resultData, output.resultData);
      // every file is recorded with its size and type, the first being output_file's
      assert.deepEqual(job.outputFiles, [
        { name: 'output.mp4', content_type: 'video/mp4', size: 1 },
        { name: 'output.en.srt', content_type: 'application/x-subrip', size: 35 },
      ]);
      assert.ok(job.expiresAt && Math.abs(job.expiresAt.getTime() - job.completedAt!.getTime() - 3_600_000) < 1000);
      // a late failJob (e.g. a retried parent) never refunds a completed job
      await runActivity(acts().failJob, { jobId, errorMessage: 'late' });
      assert.equal((await h.orm.em.fork().findOneOrFail(Job, jobId)).status, 'completed');
      assert.equal(await h.balance(accountId), 999);
    });

    it("an account's jobs take its plan's running slots in order, never more at once, however many claim together", async () => {
      const a = await h.newAccount('free'); // two running slots
      const em = h.orm.em.fork();
      const t0 = Date.now() - 60_000;
      const ids = [0, 1, 2, 3].map((i) => {
        const id = crypto.randomUUID();
        em.create(Job, { id, accountId: a.accountId, jobType: 'download', status: 'pending', sourceUrl: 'http://x/', parameters: {}, creditsCharged: 1, resultData: null, createdAt: new Date(t0 + i * 1000) });
        return id;
      });
      await em.flush();
      const claim = (id: string) => runActivity(acts().claimRunningSlot, id);
      // every job claims three times at once, youngest first: the two oldest get the slots, each once
      const claims = await Promise.all([...ids, ...ids, ...ids].reverse().map(async (id) => ({ id, claim: await claim(id) })));
      const claimed = claims.filter((c) => c.claim === 'claimed').map((c) => c.id);
      assert.deepEqual(claimed.sort(), [ids[0], ids[1]].sort(), JSON.stringify(claims));
      const statuses = async () => Promise.all(ids.map(async (id) => (await h.orm.em.fork().findOneOrFail(Job, id)).status));
      assert.deepEqual(await statuses(), ['processing', 'processing', 'pending', 'pending']);
      for (const id of [ids[0]!, ids[1]!]) {
        const started = (await h.orm.em.fork().findOneOrFail(Job, id)).startedAt;
        assert.ok(started && Math.abs(started.getTime() - Date.now()) < 60_000, `a claimed job has its start time: ${String(started)}`);
      }
      let account = await h.request('GET', '/v1/account', { key: a.key });
      assert.deepEqual([account.body.running_jobs, account.body.queued_jobs, account.body.max_running_jobs], [2, 2, 2], JSON.stringify(account.body));

      // a slot frees: the next in line is woken, and a younger job cannot jump ahead of it
      await runActivity(acts().completeJob, { jobId: ids[0]!, output: { outputFile: `${ids[0]}/output.mp4`, resultData: {} } });
      assert.deepEqual(await runActivity(acts().jobsDueASlot, ids[0]!), [ids[2]]);
      assert.equal(await claim(ids[3]!), 'waiting');
      assert.equal(await claim(ids[2]!), 'claimed');
      assert.equal(await claim(ids[2]!), 'not-pending', 'a retried claim changes nothing');
      assert.deepEqual(await statuses(), ['completed', 'processing', 'processing', 'pending']);
      account = await h.request('GET', '/v1/account', { key: a.key });
      assert.deepEqual([account.body.running_jobs, account.body.queued_jobs], [2, 1]);
      // the per-plan gauge's rows (other tests' accounts share this database: at least these)
      const byPlan = await jobCountsByPlan(h.orm.em.fork());
      assert.ok((byPlan.find((r) => r.plan === 'free' && r.status === 'processing')?.count ?? 0) >= 2, JSON.stringify(byPlan));
      assert.ok((byPlan.find((r) => r.plan === 'free' && r.status === 'pending')?.count ?? 0) >= 1, JSON.stringify(byPlan));
    });
  });
}

describe('janitor', () => {
  let h: ApiHarness;
  before(async () => {
    h = await startApiHarness('sqlite');
  });
  after(async () => {
    await h?.close();
  });

  it('removes expired output files; their links then answer 410 and live ones keep working', async () => {
    const a = await h.newAccount();
    const em = h.orm.em.fork();
    const ids = { old: crypto.randomUUID(), live: crypto.randomUUID() };
    // each job has two files: the sweep takes every file of an expired job
    const files = [
      { name: 'output.mp4', content_type: 'video/mp4', size: 5 },
      { name: 'output.en.srt', content_type: 'application/x-subrip', size: 5 },
    ];
    for (const [name, id] of Object.entries(ids)) {
      const rel = h.storage.outputRelative(id, 'output.mp4');
      fs.mkdirSync(path.dirname(h.storage.outputPath(rel)), { recursive: true });
      for (const f of files) fs.writeFileSync(h.storage.outputPath(h.storage.outputRelative(id, f.name)), 'bytes');
      const expiresAt = new Date(Date.now() + (name === 'old' ? -60_000 : 3_600_000));
      em.create(Job, { id, accountId: a.accountId, jobType: 'download', status: 'completed', sourceUrl: 'http://x/', parameters: {}, creditsCharged: 1, resultData: {}, outputFile: rel, outputFiles: files, expiresAt, completedAt: new Date(), createdAt: new Date() });
    }
    await em.flush();
    const { sweep } = await import('../jobs/maintenance.activities');
    assert.deepEqual(await sweep(h.orm, h.storage), { filesRemoved: 1, uploadsRemoved: 0 });
    for (const f of files) {
      assert.equal(fs.existsSync(h.storage.outputPath(h.storage.outputRelative(ids.old, f.name))), false, f.name);
      assert.equal(fs.existsSync(h.storage.outputPath(h.storage.outputRelative(ids.live, f.name))), true, f.name);
    }
    const job = await h.request('GET', `/v1/jobs/${ids.live}`, { key: a.key });
    assert.equal((await fetch(job.body.download_url)).status, 200);
    assert.deepEqual(job.body.files.map((f: { name: string }) => f.name), ['output.mp4', 'output.en.srt']);
    const sidecar = await fetch(job.body.files[1].url);
    assert.equal(sidecar.status, 200);
    assert.equal(sidecar.headers.get('content-type'), 'application/x-subrip');
    assert.equal((await fetch(`${job.body.download_url}/nothing.srt`)).status, 404, 'a name the job does not have');
    assert.equal((await fetch(h.links.url(ids.old, new Date(Date.now() - 60_000)))).status, 410);
    assert.equal((await fetch(h.links.fileUrl(ids.old, new Date(Date.now() - 60_000), 'output.en.srt'))).status, 410);
    const expired = await h.request('GET', `/v1/jobs/${ids.old}`, { key: a.key });
    assert.deepEqual(expired.body.files, [], 'no files once they have gone');
    assert.equal((await h.orm.em.fork().findOneOrFail(Job, ids.old)).status, 'completed', 'the job row stays');
  });

  it('removes expired uploads (row and bytes) and bodies abandoned mid-stream a day ago; a live upload stays usable', async () => {
    const a = await h.newAccount();
    const em = h.orm.em.fork();
    const ids = { old: 'upl_' + 'o'.repeat(24), live: 'upl_' + 'l'.repeat(24) };
    fs.mkdirSync(h.config.uploadsDir, { recursive: true });
    for (const [name, id] of Object.entries(ids)) {
      fs.writeFileSync(h.storage.uploadPath(id), 'bytes');
      await h.storage.commitUpload(id, { filename: `${name}.mp4`, content_type: 'video/mp4' });
      em.create(Upload, { id, accountId: a.accountId, filename: `${name}.mp4`, size: 5, contentType: 'video/mp4', createdAt: new Date(), expiresAt: new Date(Date.now() + (name === 'old' ? -60_000 : 3_600_000)) });
    }
    await em.flush();
    const abandoned = path.join(h.config.uploadsDir, 'upl_' + 'a'.repeat(24) + '.part');
    const fresh = path.join(h.config.uploadsDir, 'upl_' + 'f'.repeat(24) + '.part');
    fs.writeFileSync(abandoned, 'half');
    fs.writeFileSync(fresh, 'half');
    fs.utimesSync(abandoned, new Date(Date.now() - 25 * 3600_000), new Date(Date.now() - 25 * 3600_000));
    const { sweep } = await import('../jobs/maintenance.activities');
    assert.deepEqual(await sweep(h.orm, h.storage), { filesRemoved: 0, uploadsRemoved: 1 });
    assert.deepEqual(fs.readdirSync(h.config.uploadsDir).sort(), [`${ids.live}`, `${ids.live}.json`, path.basename(fresh)].sort());
    assert.equal(await h.orm.em.fork().findOne(Upload, ids.old), null);
    assert.equal((await h.request('GET', `/v1/uploads/${ids.live}`, { key: a.key })).status, 200);
    assert.equal((await h.request('GET', `/v1/uploads/${ids.old}`, { key: a.key })).status, 404);
  });
});
