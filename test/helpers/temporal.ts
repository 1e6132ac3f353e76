import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, DefaultLogger } from '@temporalio/worker';
import { projectRoot } from '../../lib/config';

let runtimeInstalled = false;
/** Keeps worker logs to warnings so test output stays readable. */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger('WARN') });
}

export const TEMPORAL_CLI = path.join(projectRoot, '.tools/bin/temporal');
export const TEST_SERVER = path.join(projectRoot, 'scripts/temporal-test-server');

/** Temporal's Java time-skipping test server, installed by scripts/install-tools.sh (never downloaded at run time). */
export function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: TEST_SERVER }, extraArgs: ['--enable-time-skipping'] },
  });
}

/** The real Temporal dev server from the project's CLI. */
export function localEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  return TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: TEMPORAL_CLI }, ip: '127.0.0.1' } });
}

/**
 * Waits for a workflow in the time-skipping environment, advancing virtual time in bounded steps.
 * Awaiting the result directly lets the test server skip to the next timer whenever no task is
 * held, which can jump past an activity that is scheduled but not yet polled; explicit steps
 * only ever move time by `stepMs`.
 */
export async function driveToCompletion<T>(env: TestWorkflowEnvironment, handle: { describe(): Promise<{ status: { name: string } }>; result(): Promise<T> }, stepMs = 1000, maxSteps = 20_000): Promise<T> {
  for (let i = 0; i < maxSteps; i++) {
    if ((await handle.describe()).status.name !== 'RUNNING') return handle.result();
    await env.sleep(stepMs);
  }
  throw new Error(`workflow still running after ${(maxSteps * stepMs) / 1000} s of virtual time`);
}
