// Which errors mean a dependency is down or full (answered 503, retried), and what a job that kept
// finding the disk full tells its user.
import assert from 'node:assert/strict';
import { ActivityFailure, RetryState } from '@temporalio/common';
import { describeFailure } from '../../jobs/media-job.workflow';
import { dependencyFault, unavailableDetail } from '../../lib/dependency-faults';
import { DEPENDENCY_FAILURE_TYPE, failureKindOf, JobFailure } from '../../lib/job-failure';
import { DISK_FULL_MESSAGE, FILE_STORE_MESSAGE, isDiskFull } from '../../workers/disk-space.interceptor';

const errnoError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('dependency faults', () => {
  it('names the dependency behind the errors of fs, SQLite, PostgreSQL, Temporal and the AWS SDK', () => {
    const cases: [unknown, string | null][] = [
      [errnoError('ENOSPC', "ENOSPC: no space left on device, write '/data/files/x'"), 'disk'],
      [errnoError('SQLITE_FULL', 'SQLITE_FULL: database or disk is full'), 'disk'],
      [errnoError('57P01', 'terminating connection due to administrator command'), 'database'],
      [new Error('Connection terminated unexpectedly'), 'database'],
      [Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 }), 'temporal'],
      [Object.assign(new Error('socket hang up'), { name: 'TimeoutError', $metadata: {} }), 'storage'],
      [Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } }), 'storage'],
      [Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }), null],
      [new Error('wrapped', { cause: errnoError('SQLITE_FULL', 'SQLITE_FULL: database or disk is full') }), 'disk'],
      [new TypeError("Cannot read properties of undefined (reading 'x')"), null],
      // a source that timed out is the user's or the tool's, not the bucket's
      [Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }), null],
      ['a string', null],
    ];
    for (const [err, want] of cases) assert.equal(dependencyFault(err)?.dependency ?? null, want, String((err as Error).message ?? err));
  });

  it("a 503's detail names the dependency and what to do, without a path", () => {
    const detail = unavailableDetail(dependencyFault(errnoError('ENOSPC', "ENOSPC: no space left on device, write '/data/files/x'"))!);
    assert.match(detail, /server's storage is unavailable .*Retry-After/);
    assert.doesNotMatch(detail, /\/data/);
  });

  it("a step's full disk is found in Node's error, SQLite's, or a tool's output; a job that kept finding it says so, retried and phrased for people", () => {
    assert.ok(isDiskFull(errnoError('ENOSPC', 'ENOSPC: no space left on device')));
    assert.ok(isDiskFull(JobFailure.tool('ffmpeg', 'The source could not be converted', 'av_interleaved_write_frame(): No space left on device')));
    assert.ok(!isDiskFull(JobFailure.tool('ffmpeg', 'The source could not be converted', 'moov atom not found')));
    assert.match(describeFailure(new ActivityFailure('activity failed', 'makePreview', 'a1', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'worker', JobFailure.dependency(FILE_STORE_MESSAGE))), /file store did not answer/);
    const f = JobFailure.dependency(DISK_FULL_MESSAGE);
    assert.deepEqual([f.type, f.nonRetryable, failureKindOf(DEPENDENCY_FAILURE_TYPE)], [DEPENDENCY_FAILURE_TYPE, false, 'dependency']);
    const seen = describeFailure(new ActivityFailure('activity failed', 'downloadMedia', 'a1', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'worker', f));
    assert.equal(seen, DISK_FULL_MESSAGE);
  });
});
