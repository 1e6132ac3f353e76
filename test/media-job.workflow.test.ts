import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { JobLifecycleActivities } from '../jobs/lifecycle.activities';
import type { WebhookActivities } from '../webhooks/activities';
import type { SourceActivities } from '../activities/source/activities';
import type { DownloadActivities } from '../operations/download/activities';
import { USER_FAILURE_TYPES } from '../lib/job-failure';
import { type JobEnd, type MediaJobInput } from '../jobs/types';
import { workflowBundle } from '../workers/workflow-bundle';
import { DRIVEN_WORKFLOW_OPTIONS, driveToCompletion, timeSkippingEnv } from './helpers/temporal';

type Calls = { name: string; args: unknown[] }[];

/** Activity mocks at the workflow boundary, recording every call. */
function mocks(overrides: { fetch?: Partial<SourceActivities>; process?: Partial<DownloadActivities>; control?: Partial<JobLifecycleActivities & WebhookActivities> } = {}) {
  const calls: Calls = [];
  // Only the activities a plain download uses are mocked; others are absent on purpose.
  const rec = <T extends object>(impls: Partial<T>): T =>
    Object.fromEntries(
      Object.entries(impls).map(([name, fn]) => [
        name,
        async (...args: unknown[]) => {
          calls.push({ name, args });
          return (fn as (...a: unknown[]) => unknown)(...args);
        },
      ]),
    ) as unknown as T;
  const control = rec<JobLifecycleActivities & WebhookActivities>({
    claimRunningSlot: async () => 'claimed' as const,
    jobsDueASlot: async () => [],
    completeJob: async (i) => ({ jobId: i.jobId, status: 'completed' }),
    failJob: async (i) => ({ jobId: i.jobId, status: 'failed' }),
    // event delivery has its own tests (webhooks.test.ts); here the account has no targets
    planJobEvent: async () => ({ accountId: 'a', body: '{}', targets: [], scheduleMs: [0] }),
    ...overrides.control,
  });
  // every job asks its platform's breaker first (platforms.e2e tests the breaker); here it is always closed
  Object.assign(control, { platformTurn: async () => ({ go: true, probe: false, tracked: false }), platformRefused: async () => ({ open: false, retryInMs: 1000, expired: true }), platformWorked: async () => undefined });
  const fetch = rec<SourceActivities>({
    resolveSource: async () => ({ title: 'Fixture', duration: 4, sourceFile: 'download/source.mp4', media: null }),
    ...overrides.fetch,
  });
  const process = rec<DownloadActivities>({
    finalizeDownload: async (i) => ({ outputFile: `${i.jobId}/output.mp4`, resultData: { title: i.title, duration: 4, format: 'mp4', filesize: 1000 } }),
    ...overrides.process,
  });
  return { calls, control, fetch, process };
}

describe('mediaJobWorkflow (time-skipping)', function () {
  let env: TestWorkflowEnvironment;
  let workers: Worker[] = [];
  let running: Promise<unknown>;
  // Workers live for the whole suite; their activities call the current test's mocks.
  let current = mocks();
  const delegate = (kind: 'control' | 'fetch' | 'process') =>
    Object.fromEntries(
      Object.keys(current[kind]).map((name) => [name, (...args: unknown[]) => (current[kind] as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!(...args)]),
    );

  function newInput(): MediaJobInput {
    return {
      jobId: crypto.randomUUID(),
      jobType: 'download',
      sourceUrl: 'http://fixture/v.mp4',
      params: { url: 'http://fixture/v.mp4', quality: '720p', format: 'mp4', clip_start: null, clip_end: null, processing: null, subtitles: null, webhook_url: null },
    };
  }

  before(async function () {
    env = await timeSkippingEnv();
    const common = { connection: env.nativeConnection };
    workers = await Promise.all([
      Worker.create({ ...common, taskQueue: 'control', workflowBundle: await workflowBundle(), activities: delegate('control') }),
      Worker.create({ ...common, taskQueue: 'media-fetch', activities: delegate('fetch') }),
      Worker.create({ ...common, taskQueue: 'media-process', activities: delegate('process') }),
    ]);
    running = Promise.all(workers.map((w) => w.run()));
    // Warm-up run: every queue is known to be polling before the tests start.
    const input = newInput();
    const handle = await env.client.workflow.start('mediaJobWorkflow', { taskQueue: 'control', workflowId: `job-${input.jobId}`, args: [input], ...DRIVEN_WORKFLOW_OPTIONS });
    assert.equal((await driveToCompletion(env, handle)).status, 'completed');
  });
  after(async () => {
    for (const w of workers) w.shutdown();
    await running;
    await env?.teardown();
  });

  /** Runs a job; a failed job's workflow ends Failed with the job's error_message (visible as such in the Temporal UI). */
  async function run(m: ReturnType<typeof mocks>, drive: Parameters<typeof driveToCompletion>[2] = {}): Promise<{ result: JobEnd | null; input: MediaJobInput; workflowFailure: string | null }> {
    current = m;
    const input = newInput();
    const handle = await env.client.workflow.start('mediaJobWorkflow', { taskQueue: 'control', workflowId: `job-${input.jobId}`, args: [input], ...DRIVEN_WORKFLOW_OPTIONS });
    try {
      return { result: await driveToCompletion(env, handle, drive), input, workflowFailure: null };
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
      assert.equal((await handle.describe()).status.name, 'FAILED');
      return { result: null, input, workflowFailure: err.cause?.message ?? '' };
    }
  }

  /** Starts a job, cancels it once `started` resolves, and checks it ended cancelled with exactly one failJob saying so. */
  async function cancelOnce(m: ReturnType<typeof mocks>, started: Promise<void>, opts: { idle?: boolean } = {}) {
    current = m;
    const input = newInput();
    const handle = await env.client.workflow.start('mediaJobWorkflow', { taskQueue: 'control', workflowId: `job-${input.jobId}`, args: [input], ...DRIVEN_WORKFLOW_OPTIONS });
    await started;
    // idle: cancel once no activity is in flight (the job sits in its wait), not while its last one completes:
    // the time-skipping server can leave the workflow task of a cancel that crosses a completion unfinished
    while (opts.idle && ((await handle.describe()).raw.pendingActivities?.length ?? 0) > 0) await new Promise((r) => setTimeout(r, 50));
    await handle.cancel();
    await assert.rejects(driveToCompletion(env, handle), (err: unknown) => err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure);
    const fails = m.calls.filter((c) => c.name === 'failJob');
    assert.equal(fails.length, 1);
    assert.equal((fails[0]!.args[0] as { errorMessage: string }).errorMessage, 'cancelled by the client');
    return handle;
  }

  it('claims a running slot, downloads, finalizes, completes and wakes the next job of the account', async () => {
    const m = mocks();
    const { result, input } = await run(m);
    assert.deepEqual(result, { jobId: input.jobId, status: 'completed' });
    assert.deepEqual(
      m.calls.map((c) => c.name),
      ['claimRunningSlot', 'resolveSource', 'finalizeDownload', 'completeJob', 'jobsDueASlot', 'planJobEvent'],
    );
    const complete = m.calls.find((c) => c.name === 'completeJob')!.args[0] as { output: { resultData: { title: string } } };
    assert.equal(complete.output.resultData.title, 'Fixture');
    const dl = m.calls.find((c) => c.name === 'resolveSource')!.args[0] as { quality: string; format: string };
    assert.equal(dl.quality, '720p');
    assert.equal(dl.format, 'mp4');
  });

  it('fails with the source error and refunds (failJob) when the source is unavailable, without retrying', async () => {
    const m = mocks({
      fetch: {
        resolveSource: async () => {
          throw ApplicationFailure.nonRetryable('The source is not available: HTTP Error 404: Not Found', USER_FAILURE_TYPES.unavailable);
        },
      },
    });
    const { workflowFailure } = await run(m);
    assert.equal(workflowFailure, 'The source is not available: HTTP Error 404: Not Found');
    assert.equal(m.calls.filter((c) => c.name === 'resolveSource').length, 1);
    const fails = m.calls.filter((c) => c.name === 'failJob');
    assert.equal(fails.length, 1);
    assert.equal((fails[0]!.args[0] as { errorMessage: string }).errorMessage, 'The source is not available: HTTP Error 404: Not Found');
    assert.equal(m.calls.filter((c) => c.name === 'completeJob').length, 0);
  });

  it('retries a transient download failure and then completes', async () => {
    let attempts = 0;
    const m = mocks({
      fetch: {
        resolveSource: async () => {
          if (++attempts < 3) throw ApplicationFailure.retryable('connection reset', 'YtDlpFailed');
          return { title: 'Fixture', duration: 4, sourceFile: 'download/source.mp4', media: null };
        },
      },
    });
    const { result } = await run(m);
    assert.equal(result?.status, 'completed');
    assert.equal(attempts, 3);
    assert.equal(m.calls.filter((c) => c.name === 'failJob').length, 0);
  });

  it('gives up after the retry budget and fails with a readable message', async () => {
    const m = mocks({
      process: {
        finalizeDownload: async () => {
          throw ApplicationFailure.retryable('ffmpeg failed with exit code 1 (Conversion failed!)', 'FfmpegFailed');
        },
      },
    });
    const { workflowFailure } = await run(m);
    assert.match(workflowFailure!, /^The source could not be converted: it may be damaged/);
    assert.doesNotMatch(workflowFailure!, /ffmpeg|exit code|Conversion failed/i, 'the tool\'s name and raw output stay in the logs');
    assert.equal(m.calls.filter((c) => c.name === 'finalizeDownload').length, 3);
    const msg = (m.calls.find((c) => c.name === 'failJob')!.args[0] as { errorMessage: string }).errorMessage;
    assert.equal(msg, workflowFailure);
  });

  it('a cancellation stops the running step first, then fails the job with "cancelled by the client", refunds it and sends job.failed', async () => {
    let stepStopped = false;
    let stepStarted!: () => void;
    const started = new Promise<void>((r) => (stepStarted = r));
    const m = mocks({
      fetch: {
        // a long download that heartbeats and honours cancellation, as the real ones do
        resolveSource: async () => {
          const ctx = Context.current();
          stepStarted();
          while (!ctx.cancellationSignal.aborted) {
            ctx.heartbeat();
            await new Promise((r) => setTimeout(r, 100));
          }
          await new Promise((r) => setTimeout(r, 300)); // killing its tools takes a moment
          stepStopped = true;
          throw new CancelledFailure('cancelled');
        },
      },
      control: {
        failJob: async (i) => {
          assert.ok(stepStopped, 'the job is failed (and its files removed) only after the step has stopped');
          return { jobId: i.jobId, status: 'failed' };
        },
        planJobEvent: async (i) => ({ accountId: 'a', body: JSON.stringify(i), targets: [], scheduleMs: [0] }),
      },
    });
    const handle = await cancelOnce(m, started);
    assert.equal((await handle.describe()).status.name, 'CANCELLED');
    assert.deepEqual((m.calls.find((c) => c.name === 'planJobEvent')!.args[0] as { event: string }).event, 'job.failed');
    assert.equal(m.calls.filter((c) => c.name === 'completeJob' || c.name === 'finalizeDownload').length, 0);
  });

  it("waits pending while its account's running slots are taken, re-checking on a durable timer, then runs", async () => {
    let claims = 0;
    const m = mocks({ control: { claimRunningSlot: async () => (++claims < 3 ? 'waiting' : 'claimed') } });
    // virtual time in 20 s steps: the re-check is minutes apart
    const { result } = await run(m, { stepMs: 20_000 });
    assert.equal(result?.status, 'completed');
    assert.equal(claims, 3);
    const names = m.calls.map((c) => c.name);
    assert.ok(names.lastIndexOf('claimRunningSlot') < names.indexOf('resolveSource'), `nothing ran before the slot was claimed: ${names.join(', ')}`);
  });

  it('a job cancelled while it waits for a slot ends failed, refunded, without running a step', async () => {
    let waiting!: () => void;
    const started = new Promise<void>((r) => (waiting = r));
    const m = mocks({
      control: {
        claimRunningSlot: async () => {
          waiting();
          return 'waiting';
        },
      },
    });
    await cancelOnce(m, started, { idle: true });
    assert.equal(m.calls.filter((c) => c.name === 'resolveSource').length, 0);
  });

  it('retries a failing database step instead of losing the job', async () => {
    let n = 0;
    const m = mocks({
      control: {
        completeJob: async (i) => {
          if (++n < 4) throw new Error('database is locked');
          return { jobId: i.jobId, status: 'completed' };
        },
      },
    });
    const { result } = await run(m);
    assert.equal(result?.status, 'completed');
    assert.equal(n, 4);
    assert.equal(m.calls.filter((c) => c.name === 'failJob').length, 0);
  });
});
