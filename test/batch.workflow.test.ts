// The batch workflow on a real dev server, its steps mocked at the activity boundary: item jobs are
// made a window at a time as earlier ones end, a run continues as new before its history limit and
// the next run picks up where it stopped (no item made twice, none lost), and a cancel mid-run ends it
// cancelled after its unfinished jobs.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { BatchInput, BatchProgress } from '../batches/types';
import { workflowBundle } from '../workers/workflow-bundle';
import { localEnv } from './helpers/temporal';

/** A batch as the mocked steps keep it: items waiting, jobs unfinished (each ends at the next check), jobs made. */
interface FakeBatch {
  waiting: number;
  unfinished: number;
  made: number;
  window: number;
  cancelled: boolean;
  finished: { cancelled: boolean } | null;
}

describe('batchWorkflow (real dev server, steps mocked)', function () {
  this.timeout(180_000);
  let env: TestWorkflowEnvironment;
  let workers: Worker[] = [];
  let running: Promise<unknown>;
  const batches = new Map<string, FakeBatch>();

  const control = {
    async storeBatchItems() {
      return { total: 0 };
    },
    async failBatchExpansion() {},
    async startBatchItems({ batchId }: { batchId: string }): Promise<BatchProgress> {
      const b = batches.get(batchId)!;
      // the jobs made at the last check have ended; the freed slots take the next items
      if (!b.cancelled) {
        b.unfinished = 0;
        const take = Math.min(b.window, b.waiting);
        b.waiting -= take;
        b.unfinished = take;
        b.made += take;
      } else b.unfinished = 0;
      return { waiting: b.waiting, unfinished: b.unfinished };
    },
    async cancelBatchItems({ batchId }: { batchId: string }) {
      const b = batches.get(batchId)!;
      b.cancelled = true;
      b.waiting = 0;
      return { cancelled: b.unfinished };
    },
    async finishBatch({ batchId, cancelled }: { batchId: string; cancelled: boolean }) {
      batches.get(batchId)!.finished = { cancelled };
      return { total: 0, pending: 0, processing: 0, completed: 0, failed: 0, skipped: 0 };
    },
    async planBatchEvent() {
      return { accountId: 'a', body: '{}', targets: [], scheduleMs: [0] };
    },
  };

  before(async () => {
    env = await localEnv();
    const common = { connection: env.nativeConnection };
    workers = await Promise.all([
      Worker.create({ ...common, taskQueue: 'control', workflowBundle: await workflowBundle(), activities: control }),
      Worker.create({ ...common, taskQueue: 'media-info', activities: { expandBatchSource: async () => ({ file: 'x', count: 0, note: null }), readInfo: async () => ({}) } }),
    ]);
    running = Promise.all(workers.map((w) => w.run()));
  });
  after(async () => {
    for (const w of workers) w.shutdown();
    await running;
    await env?.teardown();
  });

  function start(items: number, window: number, historyLimit?: number) {
    const batchId = crypto.randomUUID();
    batches.set(batchId, { waiting: items, unfinished: 0, made: 0, window, cancelled: false, finished: null });
    const input: BatchInput = { batchId, accountId: 'a', plan: 'pro', operation: 'waveform', source: { urls: ['https://example.com/x'] }, selection: { maxItems: items, after: null, before: null, order: 'newest' }, historyLimit };
    return { batchId, handle: env.client.workflow.start('batchWorkflow', { taskQueue: 'control', workflowId: `batch-${batchId}`, args: [input] }) };
  }

  async function runs(batchId: string): Promise<number[]> {
    const lengths: number[] = [];
    for await (const run of env.client.workflow.list({ query: `WorkflowId = "batch-${batchId}"` })) {
      lengths.push((await env.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events?.length ?? 0);
    }
    return lengths;
  }

  it('continues as new before its history limit, each run taking up where the last stopped: every item made once', async () => {
    const { batchId, handle } = start(12, 2, 30);
    await (await handle).result();
    const b = batches.get(batchId)!;
    assert.equal(b.made, 12);
    assert.deepEqual(b.finished, { cancelled: false });
    // visibility lists closed runs a moment after they close
    let lengths: number[] = [];
    for (let i = 0; i < 20 && lengths.length < 2; i++) {
      lengths = await runs(batchId);
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(lengths.length >= 2, `runs: ${JSON.stringify(lengths)}`);
    // a run stops at the first check past the limit: a check's events over it at most
    for (const n of lengths) assert.ok(n <= 30 + 12, `a run of ${n} events`);
  });

  it('a cancel mid-run cancels the items once and ends the batch cancelled', async () => {
    const { batchId, handle } = start(1_000, 1);
    const h = await handle;
    await new Promise((r) => setTimeout(r, 3000));
    await h.signal('cancelBatch');
    await h.result();
    const b = batches.get(batchId)!;
    assert.deepEqual(b.finished, { cancelled: true });
    assert.ok(b.made < 1_000, `made ${b.made}`);
  });
});
