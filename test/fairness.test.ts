import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { Client, Connection, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { accountPriority, type PlanName } from '../lib/plans';
import { startDevServer, type DevServer } from '../workers/temporal-dev-server';
import { freePort } from './helpers/processes';
import { TEMPORAL_CLI } from './helpers/temporal';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Account A queues a burst of 30 tasks before account B queues 5, all waiting on one activity queue;
 * then a worker with one slot takes them. Returns the positions at which B's tasks were handed out.
 */
async function dispatchPositions(dir: string, extraArgs: string[] = [], burst: { plan: PlanName; queued: boolean } = { plan: 'business', queued: false }): Promise<{ positions: number[]; seen: Map<string, number | undefined> }> {
  // started exactly as serve starts it, plus extraArgs
  const dev: DevServer = await startDevServer({ cliPath: TEMPORAL_CLI, dbFile: path.join(dir, `temporal-${Date.now()}.sqlite`), port: await freePort(), uiPort: await freePort(), logFile: path.join(dir, 'temporal.log'), extraArgs });
  const connection = await Connection.connect({ address: dev.address });
  const native = await NativeConnection.connect({ address: dev.address });
  try {
    const client = new Client({ connection });
    const taskQueue = 'fairness-workflows';
    const runs: WorkflowHandleWithFirstExecutionRunId[] = [];
    // the workflows run first and schedule their activities, as jobs fill a media queue while its workers are busy:
    // A's 30 are all queued before B's 5 are, so the queue's own order is known whatever this machine's load
    const workflows = await Worker.create({ connection: native, taskQueue, workflowsPath: require.resolve('./helpers/fairness-workflows'), maxConcurrentWorkflowTaskExecutions: 2 });
    const workflowsRunning = workflows.run();
    const allScheduled = async (what: string) => {
      const scheduled = async () => (await Promise.all(runs.map(async (r) => ((await r.describe()).raw.pendingActivities ?? []).length))).every((n) => n === 1);
      for (let i = 0; !(await scheduled()); i++) {
        assert.ok(i < 600, `${what} were never all scheduled`);
        await sleep(200);
      }
    };
    for (let i = 0; i < 30; i++) runs.push(await client.workflow.start('oneStep', { taskQueue, workflowId: `burst-${i}`, args: [`A${i}`], priority: accountPriority('account-a', burst.plan, { jobsAhead: burst.queued ? i : 0 }) }));
    await allScheduled("A's 30 activities");
    for (let i = 0; i < 5; i++) runs.push(await client.workflow.start('oneStep', { taskQueue, workflowId: `small-${i}`, args: [`B${i}`], priority: accountPriority('account-b', 'pro') }));
    await allScheduled("B's 5 activities");

    // one activity slot: the order of `work` calls is the order the queue dispatched them
    const order: string[] = [];
    // the priority key each activity ran with: inherited from its workflow (tools' niceness is chosen by it)
    const seen = new Map<string, number | undefined>();
    const activities = await Worker.create({
      connection: native,
      taskQueue: 'fairness-activities',
      activities: { work: async (tag: string) => (order.push(tag), seen.set(tag, Context.current().info.priority?.priorityKey), await sleep(50), tag) },
      maxConcurrentActivityTaskExecutions: 1,
    });
    await activities.runUntil(Promise.all(runs.map((r) => r.result())));
    workflows.shutdown();
    await workflowsRunning;
    assert.equal(order.length, 35);
    const positions = order.flatMap((tag, i) => (tag.startsWith('B') ? [i] : []));
    console.log(`      dispatch order: ${order.join(' ')}; account B's 5 tasks at positions ${positions.join(', ')} of 35`);
    return { positions, seen };
  } finally {
    await native.close();
    await connection.close();
    await dev.stop();
  }
}

describe('fairness between accounts on the embedded Temporal dev server (measured, not assumed from a flag)', function () {
  this.timeout(300_000);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-fairness-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("another account's work is handed out between a queued burst's tasks, not after them", async () => {
    const { positions } = await dispatchPositions(dir);
    // weights 5 (business) to 3 (pro): B's share is 3 in 8, so its 5 tasks are out within about the first 14
    assert.ok(positions.every((p) => p < 20), `B waited behind the burst: ${positions.join(', ')}`);
  });

  it("a burst's jobs beyond its plan's running slots have batch priority: another account's ordinary jobs go out before them", async () => {
    // a starter account (4 slots) queues 30 at once: its first 4 are ordinary, the other 26 a batch
    const { positions, seen } = await dispatchPositions(dir, [], { plan: 'starter', queued: true });
    assert.ok(positions.every((p) => p < 9), `B waited behind the batch: ${positions.join(', ')}`);
    // an activity knows its workflow's priority: a batch job's tools run at the batch niceness
    assert.deepEqual([seen.get('A0'), seen.get('A3'), seen.get('A4'), seen.get('A29'), seen.get('B0')], [3, 3, 4, 4, 3]);
  });

  it('control: with fairness switched off the same queue is first in, first out, so the probe above can tell', async () => {
    const { positions } = await dispatchPositions(dir, ['--dynamic-config-value', 'matching.enableFairness=false']);
    // B's activities were queued after all of A's: first in, first out hands out all 30 of A's first, which the
    // fair probes' bound (< 20) rules out
    assert.ok(positions.every((p) => p >= 30), `B was not behind the burst without fairness: ${positions.join(', ')}`);
  });
});
