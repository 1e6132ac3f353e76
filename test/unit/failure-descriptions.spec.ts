// A failed job's error_message: what a person reads, from the failure the workflow saw.
import assert from 'node:assert/strict';
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { FAILURE_TYPES } from '../../lib/jobs';
import { describeFailure } from '../../workflows/media-job.workflow';

const fromActivity = (cause: Error) => new ActivityFailure('activity failed', 'makePreview', 'a1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
const INTERNAL = /^Processing failed because of an internal error \(the details are in the service logs\); the credits were refunded/;

describe('failure descriptions', () => {
  it("a user's error keeps its message, through the activity failure around it", () => {
    for (const type of Object.values(FAILURE_TYPES)) {
      assert.equal(describeFailure(fromActivity(ApplicationFailure.nonRetryable('The page has no video', type))), 'The page has no video', type);
    }
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
});
