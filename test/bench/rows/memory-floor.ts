// The floor of the memory row: what Temporal and its SDK alone grow by under the same workflows. A
// second, bare dev server (the product's settings) and a bare worker process (peers/bare-worker.ts,
// the product's cache size, one arena and heap trim) get, before each round's measurement, as many
// workflows as serve's own server got since the last one, of the same three kinds: workflows that
// complete; workflows terminated while a worker holds them (the creates row discards its jobs so);
// and starts of a type no worker polls for (the creates row's bare `workflow.start`). Its resident
// memory is measured as the product's is, and their growth over idle compared.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { loadConfig } from '../../../lib/config';
import { startDevServer, type DevServer } from '../../../workers/temporal-dev-server';
import { freePort, waitFor } from '../../helpers/processes';
import { FLOOR_QUEUE, floorJobWorkflow } from '../floor-workflow';
import { fmt, median, processRss, type BenchContext, type BenchRow } from '../harness';
import { productMemory, SETTLE_S, uptime } from './memory';

const CONCURRENCY = 16;
/** As the creates row's bare starts. */
const UNPOLLED_TIMEOUT_S = 60;

interface Workload {
  completed: number;
  terminated: number;
  unpolled: number;
}

interface FloorStack {
  server: DevServer;
  connection: Connection;
  client: Client;
  worker: ChildProcess;
  stop(): Promise<void>;
}

let floor: FloorStack | null = null;
let cacheSize = 0;
let idle: number | null = null;
let idleParts = '';
let countFrom = '';
let ids = 0;
let unpolledUntil = 0;
const perRound: { bytes: number; settled: number; parts: string; load: Workload }[] = [];

async function startFloor(ctx: BenchContext): Promise<FloorStack> {
  const config = loadConfig({ ...process.env, ...ctx.stack.env });
  cacheSize = config.workflowCacheSize;
  const dir = path.join(ctx.work, 'memory-floor');
  fs.mkdirSync(dir, { recursive: true });
  const server = await startDevServer({ cliPath: config.temporalCliPath, dbFile: path.join(dir, 'temporal.sqlite'), port: await freePort(), uiPort: await freePort(), logFile: path.join(dir, 'temporal.log') });
  const bundleFile = path.join(dir, 'floor-bundle.js');
  const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (m: string) => console.error(m) };
  fs.writeFileSync(bundleFile, (await bundleWorkflowCode({ workflowsPath: require.resolve('../floor-workflow'), logger: quiet })).code);
  // started as bin/mediasvc starts serve: no Node flags, one malloc arena
  const worker = fork(path.join(__dirname, '../peers/bare-worker.js'), [server.address, bundleFile, String(config.workflowCacheSize)], {
    execArgv: [],
    env: { ...process.env, MALLOC_ARENA_MAX: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('exit', (code) => reject(new Error(`the memory floor's worker exited with ${code}`)));
  });
  const connection = await Connection.connect({ address: server.address });
  return {
    server,
    connection,
    client: new Client({ connection, namespace: 'default' }),
    worker,
    async stop() {
      await connection.close();
      if (worker.exitCode === null) {
        const exited = new Promise((r) => worker.once('exit', r));
        worker.kill('SIGTERM');
        await exited;
      }
      await server.stop();
    },
  };
}

/** Resident bytes of the floor's two processes. */
function floorRss(f: FloorStack): { bytes: number; parts: string } {
  const server = processRss(String(f.server.process.pid)) ?? 0;
  const worker = processRss(String(f.worker.pid)) ?? 0;
  return { bytes: server + worker, parts: `temporal ${fmt.mb(server)}, node ${fmt.mb(worker)}` };
}

/** No-op activities the floor's worker has run. */
function noops(f: FloorStack): Promise<number> {
  return new Promise((resolve) => {
    f.worker.once('message', (m: { noops: number }) => resolve(m.noops));
    f.worker.send('count');
  });
}

/** Runs `fn` `n` times, `CONCURRENCY` at once. */
async function pool(n: number, fn: () => Promise<unknown>): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, n) }, async () => {
      while (left > 0) {
        left--;
        await fn();
      }
    }),
  );
}

/** The workflows serve's own server started since `since`, by kind. */
async function workloadSince(ctx: BenchContext, since: string): Promise<Workload> {
  const count = async (where: string) => Number((await ctx.temporal.workflowService.countWorkflowExecutions({ namespace: 'default', query: `StartTime >= "${since}"${where}` })).count);
  const all = await count('');
  const unpolled = await count(` AND WorkflowType = "benchNoop"`);
  const terminated = await count(` AND WorkflowType != "benchNoop" AND ExecutionStatus = "Terminated"`);
  return { completed: all - unpolled - terminated, terminated, unpolled };
}

/**
 * Gives the floor the same workload. The held workflows go in batches of the worker's cache size,
 * each terminated before the next starts, as the creates row discards each run's jobs (a few hundred)
 * before its next run.
 */
async function drive(f: FloorStack, load: Workload, batch: number): Promise<void> {
  const id = () => `floor-${ids++}`;
  // first, so that they have timed out (a minute after their start) before the settled reading
  await pool(load.unpolled, () => f.client.workflow.start('benchNoop', { taskQueue: 'bench-noop', workflowId: id(), args: [], workflowExecutionTimeout: `${UNPOLLED_TIMEOUT_S} seconds` }));
  if (load.unpolled > 0) unpolledUntil = Date.now() + UNPOLLED_TIMEOUT_S * 1000;
  await pool(load.completed, () => f.client.workflow.execute(floorJobWorkflow, { taskQueue: FLOOR_QUEUE, workflowId: id(), args: [false] }));
  for (let left = load.terminated; left > 0; left -= batch) {
    const held: string[] = [];
    const before = await noops(f);
    await pool(Math.min(batch, left), async () => {
      const workflowId = id();
      await f.client.workflow.start(floorJobWorkflow, { taskQueue: FLOOR_QUEUE, workflowId, args: [true] });
      held.push(workflowId);
    });
    // each has run its activity, so its worker holds it, before it is terminated
    await waitFor('the held workflows to run their activity', async () => ((await noops(f)) - before >= held.length ? true : undefined), 300_000, 250);
    await pool(held.length, () => f.client.workflow.getHandle(held.shift()!).terminate('bench: discarded'));
  }
}

const row: BenchRow = {
  name: 'memory floor',
  // after the product's memory row, in the same quiet moment of each round
  order: 1,
  async setup(ctx) {
    countFrom = new Date().toISOString();
    floor = await startFloor(ctx);
    const wait = SETTLE_S - uptime(floor.server.process.pid!);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait * 1000));
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      samples.push(floorRss(floor).bytes);
      await new Promise((r) => setTimeout(r, 1000));
    }
    idle = median(samples);
    idleParts = floorRss(floor).parts;
  },
  async measure(ctx) {
    const f = floor!;
    const until = new Date().toISOString();
    const load = await workloadSince(ctx, countFrom);
    countFrom = until;
    await drive(f, load, cacheSize);
    // right after its burst the floor is at its peak: only the settled figure compares with the product's
    const { bytes } = floorRss(f);
    // settled as the product's is, and past its unpolled workflows' timeouts, whose work on the
    // floor's server would otherwise fall into the next rows
    await new Promise((r) => setTimeout(r, Math.max(SETTLE_S * 1000, unpolledUntil + 5000 - Date.now())));
    const { bytes: settled, parts } = floorRss(f);
    perRound.push({ bytes, settled, parts, load });
    return { rss: bytes, settledRss: settled, ...load };
  },
  report() {
    const product = productMemory();
    const growth = (bytes: number, from: number | null) => (from === null ? NaN : bytes - from);
    const productGrowth = product.settled.map((b) => growth(b, product.idle));
    const floorGrowth = perRound.map((r) => growth(r.settled, idle));
    return [
      { what: 'Memory floor: a bare Temporal dev server (the product\'s settings) and a bare worker process (its cache size, arena and trim), idle', product: '', peer: idle === null ? 'n/a' : `${fmt.mb(idle)} (${idleParts})`, ratio: '' },
      {
        what: `Memory floor at the start of each round, given the workflows serve's server got (completed / terminated while held / started for no worker), ${SETTLE_S} s after`,
        product: perRound.map((r) => `${r.load.completed} / ${r.load.terminated} / ${r.load.unpolled}`).join('; '),
        peer: perRound.map((r) => `${fmt.mb(r.settled)} (${r.parts})`).join(' / '),
        ratio: '',
      },
      {
        what: `Growth over idle, after ${SETTLE_S} s settling, each round: the \`serve\` tree beside the floor`,
        product: productGrowth.map((b) => fmt.mb(b)).join(' / '),
        peer: floorGrowth.map((b) => fmt.mb(b)).join(' / '),
        ratio: productGrowth.map((b, i) => fmt.ratio(b, floorGrowth[i] ?? NaN) || 'n/a').join(' / '),
      },
    ];
  },
  async teardown() {
    await floor?.stop();
    floor = null;
  },
};

export const rows = [row];
