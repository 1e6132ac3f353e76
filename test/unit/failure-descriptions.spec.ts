// A failed job's error_message: what a person reads, from the failure the workflow saw.
import assert from 'node:assert/strict';
import { ActivityFailure, ApplicationFailure, ApplicationFailureCategory, CancelledFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { failureKindOf, INTERNAL_FAILURE_MESSAGE, JobFailure, NON_RETRYABLE_FAILURE_TYPES, STORED_FAILURE_KINDS, USER_FAILURE_TYPES, userFailureKind } from '../../lib/job-failure';
import { describeFailure, failureOf } from '../../jobs/media-job.workflow';
import { backfillFailureKinds } from '../../db/migrations/failure-kinds';

const fromActivity = (cause: Error) => new ActivityFailure('activity failed', 'makePreview', 'a1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
const INTERNAL = /^Processing failed because of an internal error \(the details are in the service logs\); the credits were refunded/;

describe('the job failure model', () => {
  it("a user's failure is Temporal's failure already: its wire type, not retried, benign, the tool's words in details", () => {
    const f = JobFailure.user('unavailable', 'The source is not available: HTTP 404', 'HTTP Error 404: Not Found');
    assert.ok(f instanceof ApplicationFailure);
    assert.deepEqual([f.kind, f.type, f.nonRetryable, f.category, f.details], ['unavailable', 'SourceUnavailable', true, ApplicationFailureCategory.BENIGN, ['HTTP Error 404: Not Found']]);
  });

  it("a tool's failure is retried under the tool's wire type; the service's own fault is not retried", () => {
    const t = JobFailure.tool('ffmpeg', 'The source could not be converted', 'moov atom not found');
    assert.deepEqual([t.kind, t.type, t.nonRetryable, t.category], ['tool', 'FfmpegFailed', false, undefined]);
    const i = JobFailure.internal('job j1 does not exist', 'JobMissing');
    assert.deepEqual([i.kind, i.type, i.nonRetryable], ['internal', 'JobMissing', true]);
  });

  it('a wire type tells its kind, recorded histories included', () => {
    assert.deepEqual(['UnsupportedUrl', 'SourceUnavailable', 'SourceRejected', 'PlatformRefused', 'YtDlpFailed', 'DirectDownloadFailed', 'CommentsFailed', 'FfmpegFailed', 'JobMissing', null].map(failureKindOf), ['unsupported', 'unavailable', 'rejected', 'unavailable', 'tool', 'tool', 'tool', 'tool', 'internal', 'internal']);
    assert.equal(userFailureKind('SourceRejected'), 'rejected');
    assert.equal(userFailureKind('YtDlpFailed'), null);
    // a platform's refusal is not retried by the step: the job's workflow waits for the platform instead
    assert.equal(userFailureKind('PlatformRefused'), null);
    assert.deepEqual(NON_RETRYABLE_FAILURE_TYPES.sort(), ['PlatformRefused', 'SourceRejected', 'SourceUnavailable', 'UnsupportedUrl']);
  });
});

describe('failure descriptions', () => {
  it("a user's error keeps its message, through the activity failure around it", () => {
    for (const type of Object.values(USER_FAILURE_TYPES)) {
      assert.equal(describeFailure(fromActivity(ApplicationFailure.nonRetryable('The page has no video', type))), 'The page has no video', type);
    }
  });

  it('a JobFailure thrown in the workflow itself (a clip past the end) reads the same', () => {
    assert.equal(describeFailure(JobFailure.user('rejected', 'clip_end (9 s) is past the end of the source, which is 4 s long')), 'clip_end (9 s) is past the end of the source, which is 4 s long');
  });

  it('an engine failure phrased for people keeps its words; a local path in them does not reach the user', () => {
    assert.equal(describeFailure(fromActivity(ApplicationFailure.retryable('The site answered 503', 'YtDlpFailed'))), 'The site answered 503');
    assert.equal(describeFailure(fromActivity(ApplicationFailure.retryable('Could not write /var/lib/mediasvc/work/j1/x.part', 'DirectDownloadFailed'))), 'Could not write a local file');
  });

  it("ffmpeg's failure in the source's terms, never the tool's own output", () => {
    assert.equal(describeFailure(fromActivity(ApplicationFailure.retryable('The source has no decodable video', 'FfmpegFailed'))), 'The source has no decodable video');
    assert.equal(describeFailure(fromActivity(ApplicationFailure.retryable('moov atom not found', 'FfmpegFailed'))), 'The source could not be converted: it may be damaged or in a form that cannot be converted');
  });

  it('timeouts and cancellations say so; anything else is internal, without its message', () => {
    assert.match(describeFailure(fromActivity(new TimeoutFailure('timeout', undefined, TimeoutType.HEARTBEAT))), /^The job timed out/);
    assert.equal(describeFailure(new CancelledFailure('cancelled')), 'The job was cancelled');
    assert.match(describeFailure(fromActivity(ApplicationFailure.retryable('TypeError: x is undefined', 'TypeError'))), INTERNAL);
    assert.match(describeFailure(new Error('boom')), INTERNAL);
  });

  it('the kind the job row stores beside the message: the failure kind, timeout or cancelled; the text never decides it', () => {
    const kinds = [
      failureOf(fromActivity(JobFailure.user('rejected', 'clip_end is past the end'))),
      failureOf(fromActivity(ApplicationFailure.retryable('moov atom not found', 'FfmpegFailed'))),
      failureOf(fromActivity(JobFailure.dependency("The server's storage was full"))),
      failureOf(fromActivity(new TimeoutFailure('timeout', undefined, TimeoutType.HEARTBEAT))),
      failureOf(new CancelledFailure('cancelled')),
      failureOf(new Error('boom')),
      // a tool's message that mentions an internal error is still the tool's failure
      failureOf(fromActivity(ApplicationFailure.retryable('The site reported an internal error', 'YtDlpFailed'))),
    ].map((f) => f.kind);
    assert.deepEqual(kinds, ['rejected', 'tool', 'dependency', 'timeout', 'cancelled', 'internal', 'tool']);
    for (const k of kinds) assert.ok((STORED_FAILURE_KINDS as readonly string[]).includes(k), k);
    assert.equal(failureOf(new Error('boom')).message, INTERNAL_FAILURE_MESSAGE);
  });

  it("the migration reads the kind of older failed jobs only from the workflow's own fixed sentences, as they were written", () => {
    const sql = backfillFailureKinds('"');
    assert.equal(sql.length, 4);
    assert.ok(sql[0]!.includes(`'internal'`) && sql[0]!.includes(INTERNAL_FAILURE_MESSAGE.replace(/'/g, "''")), sql[0]);
    assert.ok(sql[1]!.includes(`'timeout'`) && sql[1]!.includes(describeFailure(fromActivity(new TimeoutFailure('t', undefined, TimeoutType.HEARTBEAT)))), sql[1]);
    assert.ok(sql[2]!.includes(`'cancelled'`) && sql[2]!.includes("'cancelled by the client'"), sql[2]);
    assert.ok(sql[3]!.includes(`'cancelled'`) && sql[3]!.includes(`'${describeFailure(new CancelledFailure('c'))}'`), sql[3]);
  });
});
