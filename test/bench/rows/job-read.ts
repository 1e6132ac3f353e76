// GET /v1/jobs/{id} on a completed job and on a running one, at 8 connections and at one, against a
// bare Koa answering the same JSON, with serve's event-loop delay over each run (its /metrics, which
// resets it at each scrape), and where the slowest 1 % of reads spent their time (Server-Timing stages).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Job } from '../../../jobs/entity';
import { coresFigures, coresLine, coresWhile, fmt, load, slowestStages, startPeer, type BenchContext, type BenchRow, type LoadResult } from '../harness';

const CONNECTIONS = 8;
let jobId = '';
/** A job row left processing: its reads ask Temporal for live progress, as a running job's do. */
let runningId = '';
let peer: Awaited<ReturnType<typeof startPeer>> | null = null;

/** Fresh keys each connection takes in turns: one key at 1 connection can pass its plan's 10,000 a minute within a run. */
const KEYS_PER_CONNECTION = 4;

/** GET of the job at `connections` connections, each with fresh keys of its own, keeping each response's stages. */
async function readLoad(ctx: BenchContext, seconds: number, connections = CONNECTIONS, id = jobId): Promise<LoadResult> {
  const keys = await Promise.all(Array.from({ length: connections * KEYS_PER_CONNECTION }, () => ctx.newKey()));
  const sent = new Array<number>(connections).fill(0);
  const headers = (i: number) => ({ authorization: `Bearer ${keys[i * KEYS_PER_CONNECTION + (sent[i]!++ % KEYS_PER_CONNECTION)]}` });
  return load({ url: `${ctx.stack.base}/v1/jobs/${id}`, connections, seconds, headers, stages: true });
}

/** The slowest 1 %'s stages (and the median's) of a run, as figures `<prefix>_slow_<stage>` / `<prefix>_mid_<stage>`. */
function stageFigures(prefix: string, result: LoadResult): Record<string, number> {
  const { slow, typical } = slowestStages(result.timed ?? []);
  return Object.fromEntries([...Object.entries(slow).map(([k, v]) => [`${prefix}_slow_${k}`, v]), ...Object.entries(typical).map(([k, v]) => [`${prefix}_mid_${k}`, v])]);
}

/** The stage line of a run from the medians of its figures. */
function stageLine(m: Record<string, number>, prefix: string): string {
  const names = Object.keys(m).filter((k) => k.startsWith(`${prefix}_slow_`) && k !== `${prefix}_slow_total`).map((k) => k.slice(`${prefix}_slow_`.length));
  const f = (k: string) => (m[k] ?? NaN).toFixed(2);
  return `slowest 1 % / median, ms: ${names.map((n) => `${n} ${f(`${prefix}_slow_${n}`)}/${f(`${prefix}_mid_${n}`)}`).join(', ')}; in all ${f(`${prefix}_slow_total`)}/${f(`${prefix}_mid_total`)}`;
}

/** monitorEventLoopDelay's sampling interval as prom-client sets it (ms): each sample is the interval plus the delay. */
const LOOP_RESOLUTION_MS = 10;

/** serve's event-loop delay (p99 and max, ms, beyond the sampling interval) since the last scrape: prom-client resets its histogram at each. */
async function eventLoopDelay(ctx: BenchContext): Promise<{ p99: number; max: number }> {
  const res = await fetch(`${ctx.stack.base}/metrics`, { headers: { authorization: `Bearer ${ctx.stack.env.METRICS_TOKEN}` } });
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  const text = await res.text();
  const gauge = (name: string) => Number(new RegExp(`^mediasvc_process_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1]) * 1000 - LOOP_RESOLUTION_MS;
  return { p99: gauge('p99'), max: gauge('max') };
}

/**
 * Runs `fn` on a busy machine: preview clips of the 10 s source (a re-encode, about a second of
 * ffmpeg each) made one after another through serve, so a media job is always running beside it.
 */
async function whileMediaJobRuns<T>(ctx: BenchContext, fn: () => Promise<T>): Promise<{ result: T; jobs: number }> {
  let done = false;
  let jobs = 0;
  let started!: () => void;
  const first = new Promise<void>((r) => (started = r));
  const media = (async () => {
    while (!done) {
      const res = await ctx.stack.api('POST', '/v1/preview', { url: ctx.files.url('clip10.mp4'), preview_type: 'clip', duration: 10, width: 640 });
      if (res.status !== 202) throw new Error(`POST /v1/preview answered ${res.status}: ${JSON.stringify(res.body)}`);
      const id = (res.body as { job_id: string }).job_id;
      // the read starts once the first job's tool runs
      for (let s = 0; !done && s < 100; s++) {
        const job = await ctx.stack.api('GET', `/v1/jobs/${id}`);
        if ((job.body as { status: string }).status !== 'pending') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      started();
      const end = await ctx.stack.waitJob(id, 120_000);
      if (end.status !== 'completed') throw new Error(`the busy machine's preview job ended ${end.status}`);
      jobs++;
    }
  })();
  try {
    await Promise.race([first, media]);
    const result = await fn();
    return { result, jobs };
  } finally {
    done = true;
    await media;
  }
}

/** One read run with the event-loop delay over it. */
async function measuredRead(ctx: BenchContext, connections: number, id = jobId) {
  await eventLoopDelay(ctx);
  const { result, cores } = await coresWhile(ctx.stack.svc.child.pid!, () => readLoad(ctx, ctx.seconds, connections, id));
  return { result, cores, delay: await eventLoopDelay(ctx) };
}

const row: BenchRow = {
  name: 'job read',
  order: 10,
  async setup(ctx) {
    // a completed fingerprint job, written as the workflow would leave it
    jobId = crypto.randomUUID();
    const now = new Date();
    const em = ctx.orm.em.fork();
    em.create(Job, {
      id: jobId,
      accountId: ctx.stack.accountId,
      jobType: 'fingerprint',
      status: 'completed',
      sourceUrl: ctx.files.url('clip10.mp4'),
      parameters: { url: ctx.files.url('clip10.mp4'), timestamp: null, hash_size: 16, webhook_url: null },
      creditsCharged: 1,
      progress: 100,
      resultData: { average_hash: 'f'.repeat(64), perceptual_hash: 'a'.repeat(64), difference_hash: '0'.repeat(64), hash_size: 16, frame_timestamp: '00:00:02.500', title: 'clip10' },
      outputFile: `${jobId}/fingerprint.json`,
      createdAt: now,
      startedAt: now,
      completedAt: now,
      expiresAt: new Date(now.getTime() + 3_600_000),
    });
    await em.flush();
    const res = await ctx.stack.api('GET', `/v1/jobs/${jobId}`);
    if (res.status !== 200) throw new Error(`GET /v1/jobs/${jobId} answered ${res.status}`);
    const file = path.join(ctx.work, 'job.json');
    fs.writeFileSync(file, JSON.stringify(res.body));
    peer = await startPeer('bare-koa.js', ['json', file]);
    // unmeasured warm-up, so the first round does not time the JIT compiling the request path
    await readLoad(ctx, 2);
  },
  async measure(ctx) {
    const { result: product, cores, delay } = await measuredRead(ctx, CONNECTIONS);
    const bare = await load({ url: `http://127.0.0.1:${peer!.port}/v1/jobs/${jobId}`, connections: CONNECTIONS, seconds: ctx.seconds });
    const ok = product.statuses[200] ?? 0;
    const one = await measuredRead(ctx, 1);
    for (const [what, r] of [['completed, 8 connections', product], ['completed, 1 connection', one.result]] as const) {
      if (Object.keys(r.statuses).some((st) => st !== '200')) console.log(`job read, ${what}: statuses ${JSON.stringify(r.statuses)}`);
    }
    const bareOne = await load({ url: `http://127.0.0.1:${peer!.port}/v1/jobs/${jobId}`, connections: 1, seconds: ctx.seconds });
    // a job row processing for the two runs only (the rows after wait for an idle serve)
    runningId = crypto.randomUUID();
    const em = ctx.orm.em.fork();
    const now = new Date();
    const parameters = { url: ctx.files.url('clip10.mp4'), timestamp: null, hash_size: 16, webhook_url: null };
    em.create(Job, { id: runningId, accountId: ctx.stack.accountId, jobType: 'fingerprint', status: 'processing', sourceUrl: parameters.url, parameters, creditsCharged: 1, progress: 40, resultData: null, createdAt: now, startedAt: now });
    await em.flush();
    const running = await measuredRead(ctx, CONNECTIONS, runningId);
    const runningOne = await measuredRead(ctx, 1, runningId);
    // the same four reads on a busy machine: a media job running beside each
    const busy = await whileMediaJobRuns(ctx, async () => ({
      done8: await readLoad(ctx, ctx.seconds, CONNECTIONS),
      done1: await readLoad(ctx, ctx.seconds, 1),
      run8: await readLoad(ctx, ctx.seconds, CONNECTIONS, runningId),
      run1: await readLoad(ctx, ctx.seconds, 1, runningId),
    }));
    await em.getConnection().execute(`update jobs set status = 'failed', completed_at = ? where id = ?`, [Date.now(), runningId]);
    const busyFigures = Object.fromEntries(
      Object.entries(busy.result).flatMap(([k, r]) => [
        [`busy_${k}_rps`, (r.statuses[200] ?? 0) / ctx.seconds],
        [`busy_${k}_p50`, r.p50Ms],
        [`busy_${k}_p99`, r.p99Ms],
        [`busy_${k}_non200`, r.requests - (r.statuses[200] ?? 0)],
      ]),
    );
    const runningOk = (running.result.statuses[200] ?? 0) + (runningOne.result.statuses[200] ?? 0);
    return {
      runRps: (running.result.statuses[200] ?? 0) / ctx.seconds, runP50: running.result.p50Ms, runP99: running.result.p99Ms, runLoopMax: running.delay.max,
      runOneRps: (runningOne.result.statuses[200] ?? 0) / ctx.seconds, runOneP50: runningOne.result.p50Ms, runOneP99: runningOne.result.p99Ms, runOneLoopMax: runningOne.delay.max,
      runNon200: running.result.requests + runningOne.result.requests - runningOk,
      ...stageFigures('done8', product), ...stageFigures('done1', one.result), ...stageFigures('run8', running.result), ...stageFigures('run1', runningOne.result),

      rps: ok / ctx.seconds, p50: product.p50Ms, p99: product.p99Ms, non200: product.requests - ok + (one.result.requests - (one.result.statuses[200] ?? 0)),
      bareRps: bare.rps, bareP50: bare.p50Ms, bareP99: bare.p99Ms, loopP99: delay.p99, loopMax: delay.max,
      oneRps: (one.result.statuses[200] ?? 0) / ctx.seconds, oneP50: one.result.p50Ms, oneP99: one.result.p99Ms, oneLoopP99: one.delay.p99, oneLoopMax: one.delay.max,
      bareOneRps: bareOne.rps, bareOneP50: bareOne.p50Ms, bareOneP99: bareOne.p99Ms,
      ...coresFigures(cores),
      ...busyFigures, busyJobs: busy.jobs,
    };
  },
  report: (m) => [
    {
      what: `\`GET /v1/jobs/{id}\` (completed job), ${CONNECTIONS} connections`,
      product: `${fmt.rate(m.rps!, 'req/s')}, p50 ${fmt.ms(m.p50!)}, p99 ${fmt.ms(m.p99!)}`,
      peer: `bare Koa, same JSON: ${fmt.rate(m.bareRps!, 'req/s')}, p50 ${fmt.ms(m.bareP50!)}, p99 ${fmt.ms(m.bareP99!)}`,
      ratio: fmt.ratio(m.rps!, m.bareRps!),
    },
    { what: '(same) serve\'s event-loop delay during the run', product: `p99 ${fmt.ms(m.loopP99!)}, max ${fmt.ms(m.loopMax!)}`, peer: '', ratio: '' },
    {
      what: '`GET /v1/jobs/{id}` (completed job), 1 connection',
      product: `${fmt.rate(m.oneRps!, 'req/s')}, p50 ${fmt.ms(m.oneP50!)}, p99 ${fmt.ms(m.oneP99!)}; event-loop delay p99 ${fmt.ms(m.oneLoopP99!)}, max ${fmt.ms(m.oneLoopMax!)}`,
      peer: `bare Koa, same JSON: ${fmt.rate(m.bareOneRps!, 'req/s')}, p50 ${fmt.ms(m.bareOneP50!)}, p99 ${fmt.ms(m.bareOneP99!)}`,
      ratio: fmt.ratio(m.oneRps!, m.bareOneRps!),
    },
    { what: `(same) CPU cores used during the run, of ${os.availableParallelism()}`, product: coresLine(m), peer: '', ratio: '' },
    { what: '`GET /v1/jobs/{id}` (running job: live progress from Temporal), 8 connections', product: `${fmt.rate(m.runRps!, 'req/s')}, p50 ${fmt.ms(m.runP50!)}, p99 ${fmt.ms(m.runP99!)}; event-loop delay max ${fmt.ms(m.runLoopMax!)}`, peer: '', ratio: '' },
    { what: '`GET /v1/jobs/{id}` (running job), 1 connection', product: `${fmt.rate(m.runOneRps!, 'req/s')}, p50 ${fmt.ms(m.runOneP50!)}, p99 ${fmt.ms(m.runOneP99!)}; event-loop delay max ${fmt.ms(m.runOneLoopMax!)}${m.runNon200 ? `; ${m.runNon200} not 200` : ''}`, peer: '', ratio: '' },
    ...(
      [
        ['done8', `completed job, ${CONNECTIONS} connections`, m.p99],
        ['done1', 'completed job, 1 connection', m.oneP99],
        ['run8', `running job, ${CONNECTIONS} connections`, m.runP99],
        ['run1', 'running job, 1 connection', m.runOneP99],
      ] as const
    ).map(([k, what, idle]) => ({
      what: `(busy machine) \`GET /v1/jobs/{id}\`, ${what}, while preview clips run one after another (${Math.round(m.busyJobs!)} in the four runs)`,
      product: `${fmt.rate(m[`busy_${k}_rps`]!, 'req/s')}, p50 ${fmt.ms(m[`busy_${k}_p50`]!)}, p99 ${fmt.ms(m[`busy_${k}_p99`]!)}${m[`busy_${k}_non200`] ? `; ${m[`busy_${k}_non200`]} not 200` : ''}`,
      peer: `idle: p99 ${fmt.ms(idle!)}`,
      ratio: fmt.ratio(m[`busy_${k}_p99`]!, idle!),
    })),
    ...(
      [
        ['done8', `completed, ${CONNECTIONS} connections`],
        ['done1', 'completed, 1 connection'],
        ['run8', `running, ${CONNECTIONS} connections`],
        ['run1', 'running, 1 connection'],
      ] as const
    ).map(([prefix, what]) => ({ what: `(stages) ${what}: where the slowest 1 % of reads spent their time (Server-Timing), beside the median read`, product: stageLine(m, prefix), peer: '', ratio: '' })),
  ],
  async teardown() {
    await peer?.stop();
  },
};

export const rows = [row];
