// Faults of what `make run` depends on, injected during bursts of jobs on one real serve whose
// DATA_DIR is a small tmpfs: the embedded Temporal server SIGKILLed (and started again by serve),
// the disk below MIN_FREE_DISK_MB and then full, and a Temporal database that cannot be opened again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixtureCacheDir, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { ledgerByJob } from './helpers/ledger';
import { waitFor } from './helpers/processes';
import { startServeStack, type ApiResponse, type ServeStack } from './helpers/serve-stack';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MiB = 2 ** 20;
/** The tmpfs DATA_DIR: room for both databases and the jobs' files, small enough to fill in a moment. */
const TMPFS_MB = 400;
const MIN_FREE_DISK_MB = 40;
const METRICS_TOKEN = 'dependency-faults-metrics-token';
/** A 72 MB lossless source: its download cannot fit in what the full-disk test leaves free. */
const BIG_SOURCE = '/big/lossless.mp4';

/** What every fault test counts and prints. */
class Tally {
  accepted: string[] = [];
  refused503 = 0;
  otherStatuses = new Map<number, number>();
  problems: string[] = [];

  /** Records an answer: its normal status, or a 503 with Retry-After and a detail; anything else is a problem. */
  answer(what: string, res: ApiResponse, normal: number[]): void {
    if (normal.includes(res.status)) return;
    if (res.status === 503 && res.headers.get('retry-after') && typeof res.body?.detail === 'string' && res.body.detail.length > 20) {
      this.refused503++;
      return;
    }
    this.otherStatuses.set(res.status, (this.otherStatuses.get(res.status) ?? 0) + 1);
    this.problems.push(`${what}: ${res.status} ${JSON.stringify(res.body)} retry-after=${res.headers.get('retry-after')}`);
  }
}

function devServerPid(dataDir: string): number | undefined {
  const db = path.join(dataDir, 'temporal.sqlite');
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd.includes('start-dev') && cmd.includes(db)) return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

const freeBytes = (dir: string) => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};

/** Fills the volume with a file until about `leaveBytes` are free. */
function fillUntil(dir: string, file: string, leaveBytes: number): void {
  const fd = fs.openSync(file, 'a');
  const chunk = Buffer.alloc(MiB, 7);
  try {
    for (let free = freeBytes(dir); free > leaveBytes; free = freeBytes(dir)) {
      fs.writeSync(fd, chunk, 0, Math.min(chunk.length, free - leaveBytes));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

describe('dependency faults under make run: the embedded Temporal server, a low and a full disk (real serve on a tmpfs DATA_DIR)', function () {
  this.timeout(30 * 60_000);
  let fx: FixturePlatform;
  let rx: Receiver;
  let s: ServeStack;
  let mount: string;
  let filler: string;
  const allJobs = new Set<string>();

  before(async () => {
    assert.equal(process.getuid?.(), 0, 'DATA_DIR is a tmpfs of its own (mount), which needs root');
    const big = path.join(fixtureCacheDir(), 'big-lossless.mp4');
    fs.mkdirSync(path.dirname(big), { recursive: true });
    if (!fs.existsSync(big)) {
      // noise, losslessly coded: about 36 MB a second
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', "nullsrc=s=1280x720:r=25,geq=lum='random(1)*255':cb=128:cr=128", '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', '-pix_fmt', 'yuv420p', `${big}.part.mp4`]);
      fs.renameSync(`${big}.part.mp4`, big);
    }
    fx = await startFixturePlatform({
      extraRoutes: (_req, res, p) => {
        if (p !== BIG_SOURCE) return false;
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': fs.statSync(big).size });
        fs.createReadStream(big).pipe(res);
        return true;
      },
    });
    rx = await startReceiver();
    mount = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-faults-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MB}m`, 'faults-data', mount]);
    const dataDir = path.join(mount, 'data');
    fs.mkdirSync(dataDir);
    filler = path.join(mount, 'filler');
    s = await startServeStack({
      name: 'faults',
      plan: 'business',
      dataDir,
      // four tries, not ten: the same give-up, about 50 s sooner (a SIGKILLed server is back at the first)
      env: { TEMPORAL_DEV_RESTART_TRIES: '4', MIN_FREE_DISK_MB: String(MIN_FREE_DISK_MB), DISK_FULL_RETRY_SECONDS: '2', METRICS_TOKEN, RECONCILE_AFTER_SECONDS: '3', RECONCILE_INTERVAL_SECONDS: '5' },
    });
    // an account-wide endpoint: every job's job.completed is counted there
    const hook = await s.api('POST', '/v1/webhooks', { url: rx.url('/all'), events: [] });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
  });

  after(async () => {
    await s?.stop().catch(() => undefined);
    if (mount) {
      try {
        execFileSync('umount', ['-l', mount]);
      } catch {
        // not mounted
      }
      fs.rmSync(mount, { recursive: true, force: true });
    }
    await rx?.close();
    await fx?.close();
  });

  const create = async (t: Tally, what: 'fingerprint' | 'thumbnail' | 'big download') => {
    const [route, body] =
      what === 'fingerprint'
        ? ['/v1/fingerprint', { url: fx.url('/media/v480.mp4'), hash_size: 8 }]
        : what === 'thumbnail'
          ? ['/v1/preview', { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail', width: 160 }]
          : ['/v1/download', { url: fx.url(BIG_SOURCE), format: 'mp4' }];
    const res = await s.api('POST', route, body).catch((err: Error) => ({ status: 0, headers: new Headers(), body: { detail: err.message } }) as ApiResponse);
    t.answer(`POST ${route}`, res, [202]);
    if (res.status === 202) {
      t.accepted.push(res.body.job_id);
      allJobs.add(res.body.job_id);
    }
    return res;
  };

  /** Reads the API keeps answering through a fault: the job list and each job (normal, or 503 with Retry-After). */
  const readAll = async (t: Tally) => {
    t.answer('GET /v1/jobs', await s.api('GET', '/v1/jobs?limit=5'), [200]);
    for (const id of t.accepted.slice(-3)) t.answer(`GET /v1/jobs/${id}`, await s.api('GET', `/v1/jobs/${id}`), [200]);
  };

  const ready = async () => {
    const res = await fetch(`${s.base}/readyz`);
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };

  /** Every job ended; each charged once and refunded once exactly when it failed. */
  const settle = async (t: Tally) => {
    const jobs = await Promise.all(t.accepted.map((id) => s.waitJob(id, 10 * 60_000)));
    const ledger = await ledgerByJob(path.join(s.dataDir, 'mediasvc.sqlite'));
    for (const j of jobs) {
      const l = ledger.get(j.job_id) ?? { charges: 0, refunds: 0 };
      assert.equal(l.charges, 1, `job ${j.job_id} charged ${l.charges} times`);
      assert.equal(l.refunds, j.status === 'failed' ? 1 : 0, `job ${j.job_id} (${j.status}: ${j.error_message ?? ''}) refunded ${l.refunds} times`);
    }
    return jobs;
  };

  const report = (name: string, t: Tally, jobs: { status: string }[], recoverSeconds: number) => {
    const failed = jobs.filter((j) => j.status === 'failed').length;
    console.log(
      `      ${name}: ${t.accepted.length} accepted, ${jobs.length - failed} completed, ${failed} failed, ${failed} refunded; ` +
        `${t.refused503} answered 503 with Retry-After; recovered in ${recoverSeconds.toFixed(1)} s`,
    );
  };

  it('the embedded Temporal server SIGKILLed mid-burst: serve starts it again, and every job accepted before and during the outage completes', async () => {
    const t = new Tally();
    await Promise.all(Array.from({ length: 12 }, (_, i) => create(t, i % 2 ? 'fingerprint' : 'thumbnail')));
    const pid = devServerPid(s.dataDir);
    assert.ok(pid, 'the dev server is running');
    // it hangs first (a stopped process: /readyz must name it), then dies; started again it is back in
    // well under a second, too soon for a probe to be sure to see the death itself
    process.kill(pid, 'SIGSTOP');
    const killedAt = Date.now();
    const down = await waitFor('/readyz naming Temporal', async () => {
      const r = await ready();
      return r.status === 503 && r.body.temporal !== 'ok' ? r.body : undefined;
    }, 30_000, 100);
    assert.equal(down.database, 'ok', JSON.stringify(down));
    process.kill(pid, 'SIGKILL');
    // creates and reads while it is down and coming back
    const during = [];
    for (let i = 0; i < 6; i++) {
      during.push(create(t, i % 2 ? 'fingerprint' : 'thumbnail'));
      await readAll(t);
      await sleep(300);
    }
    await Promise.all(during);
    const back = await waitFor('the dev server started again', async () => {
      const again = devServerPid(s.dataDir);
      return again && again !== pid ? again : undefined;
    }, 120_000, 250);
    const green = await waitFor('/readyz green again', async () => ((await ready()).status === 200 ? Date.now() : undefined), 120_000, 250);
    const jobs = await settle(t);
    assert.deepEqual(t.problems, [], 'every answer was normal or a 503 with Retry-After');
    assert.equal(t.accepted.length, 18 - t.refused503, `creates: ${t.accepted.length} accepted, ${t.refused503} refused with 503`);
    assert.deepEqual(jobs.filter((j) => j.status !== 'completed').map((j) => `${j.job_id}: ${j.error_message}`), [], 'every job completed');
    assert.match(fs.readFileSync(s.svc.logFile, 'utf8'), /the embedded Temporal server is back/);
    assert.notEqual(back, pid);
    // each job reported completed once at the account's endpoint
    await waitFor('a job.completed for each job', async () => (new Set(completedDeliveries().keys()).size >= jobs.length ? true : undefined), 120_000, 500);
    await sleep(2000);
    const twice = [...completedDeliveries()].filter(([id, n]) => t.accepted.includes(id) && n > 1);
    assert.deepEqual(twice, [], 'no job reported completed twice');
    report('embedded Temporal SIGKILLed', t, jobs, (green - killedAt) / 1000);
  });

  const completedDeliveries = () => {
    const byJob = new Map<string, number>();
    for (const r of rx.received.filter((x) => x.path === '/all')) {
      const body = JSON.parse(r.body) as { event: string; data: { job_id: string } };
      if (body.event === 'job.completed') byJob.set(body.data.job_id, (byJob.get(body.data.job_id) ?? 0) + 1);
    }
    return byJob;
  };

  it('below MIN_FREE_DISK_MB: reads answer, /readyz and /metrics say so, new steps wait rather than fail, and run once space is freed', async () => {
    const t = new Tally();
    fillUntil(s.dataDir, filler, (MIN_FREE_DISK_MB - 15) * MiB);
    const low = await ready();
    assert.equal(low.status, 503, JSON.stringify(low.body));
    assert.match(low.body.disk!, /^low: \d+ MB free under DATA_DIR, below MIN_FREE_DISK_MB=40/, JSON.stringify(low.body));
    const metrics = await (await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    assert.match(metrics, /^mediasvc_disk_low 1$/m);
    assert.match(metrics, /^mediasvc_disk_free_bytes \d+/m);
    await Promise.all(Array.from({ length: 4 }, (_, i) => create(t, i % 2 ? 'fingerprint' : 'thumbnail')));
    // held: still running after a while, none failed
    for (let i = 0; i < 10; i++) {
      await readAll(t);
      await sleep(1000);
    }
    const held = await Promise.all(t.accepted.map(async (id) => (await s.api('GET', `/v1/jobs/${id}`)).body.status as string));
    assert.ok(held.every((st) => st === 'pending' || st === 'processing'), `held, not ended: ${held.join(', ')}`);
    const freedAt = Date.now();
    fs.rmSync(filler);
    const jobs = await settle(t);
    const green = await waitFor('/readyz green again', async () => ((await ready()).status === 200 ? Date.now() : undefined), 60_000, 250);
    assert.deepEqual(t.problems, []);
    assert.deepEqual(jobs.filter((j) => j.status !== 'completed').map((j) => `${j.job_id}: ${j.error_message}`), [], 'every held job completed once space was freed');
    assert.match(await (await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text(), /^mediasvc_disk_low 0$/m);
    report('disk below MIN_FREE_DISK_MB', t, jobs, (Math.max(green, Date.now()) - freedAt) / 1000);
  });

  it('a full disk: reads answer, a job that cannot write its output fails about the server storage with one refund, no database is damaged, and jobs complete once space returns', async () => {
    const t = new Tally();
    // room to start (above MIN_FREE_DISK_MB), not to finish: the download writes 72 MB
    fillUntil(s.dataDir, filler, (MIN_FREE_DISK_MB + 20) * MiB);
    await create(t, 'big download');
    const bigId = t.accepted[0]!;
    // the disk fills up while the burst and the reads go on
    const burst: Promise<unknown>[] = [];
    const deadline = Date.now() + 10 * 60_000;
    for (let i = 0; ; i++) {
      if (i < 8) burst.push(create(t, i % 2 ? 'fingerprint' : 'thumbnail'));
      await readAll(t);
      const big = (await s.api('GET', `/v1/jobs/${bigId}`)).body;
      if (big?.status === 'failed' || big?.status === 'completed') break;
      assert.ok(Date.now() < deadline, 'the big download ended');
      await sleep(500);
    }
    await Promise.all(burst);
    const big = await s.waitJob(bigId);
    assert.equal(big.status, 'failed', `the 72 MB download on a disk with ${MIN_FREE_DISK_MB + 20} MB free: ${JSON.stringify(big)}`);
    assert.match(big.error_message!, /server's storage/);
    assert.equal(big.failure_kind, 'dependency', "the service's fault, as a kind");
    assert.doesNotMatch(big.error_message!, /\//, 'no path in the message');
    // the step met the full disk itself (not a limit of ours) and gave its space back
    assert.match(fs.readFileSync(s.svc.logFile, 'utf8'), /a step found the disk under DATA_DIR full; it removed the files it had begun/);
    // not a byte left: reads still answer 200; a create answers 202 (its rows fit) or 503 with Retry-After
    fillUntil(s.dataDir, filler, 0);
    const reads = t.problems.length;
    for (let i = 0; i < 3; i++) {
      await create(t, 'thumbnail');
      const list = await s.api('GET', '/v1/jobs?limit=5');
      assert.equal(list.status, 200, `GET /v1/jobs on a full disk: ${list.status} ${JSON.stringify(list.body)}`);
      await readAll(t);
    }
    assert.equal(t.problems.length, reads, t.problems.join('\n'));
    const freedAt = Date.now();
    fs.rmSync(filler, { force: true });
    // the burst created during the fault, and new jobs once space is back
    await Promise.all(Array.from({ length: 4 }, (_, i) => create(t, i % 2 ? 'fingerprint' : 'thumbnail')));
    const jobs = await settle(t);
    const green = await waitFor('/readyz green again', async () => ((await ready()).status === 200 ? Date.now() : undefined), 60_000, 250);
    assert.deepEqual(t.problems, [], 'every answer was normal or a 503 with Retry-After');
    assert.deepEqual(jobs.filter((j) => j.job_id !== bigId && j.status !== 'completed').map((j) => `${j.job_id}: ${j.error_message}`), [], 'every other job completed');
    for (const db of ['mediasvc.sqlite', 'temporal.sqlite']) {
      // a consistent copy of the live file (its FTS5 index is checked by writing to it)
      const copy = path.join(os.tmpdir(), `faults-${process.pid}-${db}`);
      execFileSync('sqlite3', [path.join(s.dataDir, db), `.backup '${copy}'`]);
      const check = execFileSync('sqlite3', [copy, 'pragma integrity_check'], { encoding: 'utf8' }).trim();
      fs.rmSync(copy, { force: true });
      assert.equal(check, 'ok', db);
    }
    report('full disk', t, jobs, (green - freedAt) / 1000);
  });

  it('a Temporal database that cannot be opened again: serve stops with one clear line instead of staying half alive', async () => {
    const pid = devServerPid(s.dataDir);
    assert.ok(pid);
    const db = path.join(s.dataDir, 'temporal.sqlite');
    for (const f of [`${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true });
    fs.writeFileSync(db, Buffer.alloc(64 * 1024, 'not a database '));
    process.kill(pid, 'SIGKILL');
    const code = await Promise.race([s.svc.exited, sleep(5 * 60_000).then(() => 'still running')]);
    assert.equal(code, 1, `serve's exit: ${code}`);
    const lines = fs.readFileSync(s.svc.logFile, 'utf8').trim().split('\n');
    assert.match(lines.at(-1)!, /^mediasvc: the embedded Temporal server died and could not be started again after \d+ tries/, lines.slice(-5).join('\n'));
    assert.equal(devServerPid(s.dataDir), undefined, 'no dev server left behind');
  });
});
