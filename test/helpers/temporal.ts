import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { projectRoot } from '../../lib/config';

let runtimeInstalled = false;
/** Keeps worker logs to errors: tests fail activities on purpose, and each failure logs a warning. */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }), forward: {} } },
  });
}

export const TEMPORAL_CLI = path.join(projectRoot, '.tools/bin/temporal');
export const TEST_SERVER = path.join(projectRoot, 'scripts/temporal-test-server');

/**
 * Temporal's Java time-skipping test server, installed by scripts/install-tools.sh (never
 * downloaded at run time). The server starts with time skipping unlocked, so it would jump to the
 * next timer whenever it sees no task in flight, even a task that is scheduled but not yet polled;
 * it is locked here, and tests move time explicitly with driveToCompletion().
 */
export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: TEST_SERVER }, extraArgs: ['--enable-time-skipping'] },
  });
  await env.connection.testService!.lockTimeSkipping({});
  return env;
}

/** Start options for workflows under driveToCompletion: a workflow task may take many virtual seconds of stepping. */
export const DRIVEN_WORKFLOW_OPTIONS = { workflowTaskTimeout: '1 minute' } as const;

/** The real Temporal dev server from the project's CLI. */
export function localEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  return TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: TEMPORAL_CLI }, ip: '127.0.0.1' } });
}

/**
 * Waits for a workflow in the (locked) time-skipping environment, moving virtual time by `stepMs`
 * after each `realMs` of real time, so work in flight always gets real time to finish before timers
 * and retry backoffs are skipped. Start the workflow with DRIVEN_WORKFLOW_OPTIONS.
 */
export async function driveToCompletion<T>(
  env: TestWorkflowEnvironment,
  handle: { describe(): Promise<{ status: { name: string }; raw: { pendingActivities?: unknown[] | null } }>; result(): Promise<T> },
  opts: { stepMs?: number; realMs?: number; maxSteps?: number; holdWhileActivities?: boolean } = {},
): Promise<T> {
  // holdWhileActivities: never move time while an activity is pending (for workflows whose
  // activities are not retried, so a pending activity is always one in flight).
  const { stepMs = 1000, realMs = 250, maxSteps = 20_000, holdWhileActivities = false } = opts;
  for (let i = 0; i < maxSteps; i++) {
    if ((await handle.describe()).status.name !== 'RUNNING') return handle.result();
    await new Promise((r) => setTimeout(r, realMs));
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return handle.result();
    if (holdWhileActivities && (d.raw.pendingActivities?.length ?? 0) > 0) continue;
    await env.sleep(stepMs);
  }
  throw new Error(`workflow still running after ${(maxSteps * stepMs) / 1000} s of virtual time`);
}
