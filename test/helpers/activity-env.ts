import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';

/** Runs an activity function in a mock Activity context, collecting heartbeat progress values. */
export async function runActivity<A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return (await activityEnv().run(fn, ...args)) as R;
}

/** A mock activity environment that does not log expected failures. */
export function activityEnv(onProgress?: (progress: number) => void): MockActivityEnvironment {
  const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  if (onProgress) {
    env.on('heartbeat', (d: { progress?: number } | undefined) => {
      if (typeof d?.progress === 'number') onProgress(d.progress);
    });
  }
  return env;
}

/** Asserts that an activity failed with a non-retryable ApplicationFailure of the given type and message. */
export async function expectNonRetryable(p: Promise<unknown>, type: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure, String(err));
    assert.equal(err.type, type);
    assert.equal(err.nonRetryable, true);
    assert.match(err.message, message);
    return true;
  });
}
