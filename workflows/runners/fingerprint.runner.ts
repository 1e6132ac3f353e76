import { ApplicationFailure } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../lib/jobs';
import { parseTimeString } from '../../lib/time';
import { mediaFetch, mediaProcess } from '../activity-proxies';
import type { OperationRunner } from './types';

/** Fingerprint: check limits, fetch a 720p rendition, hash one frame. */
export const runFingerprint: OperationRunner<'fingerprint'> = async ({ jobId, params }) => {
  const source = await mediaFetch.probeSource(params.url);
  const timestamp = params.timestamp === null ? null : parseTimeString(params.timestamp);
  if (timestamp !== null && source.duration !== null && timestamp >= source.duration) {
    throw ApplicationFailure.nonRetryable(`timestamp (${timestamp} s) is past the end of the source, which is ${source.duration} s long`, FAILURE_TYPES.rejected);
  }
  const sourceFile = await mediaFetch.downloadSource({ jobId, url: params.url, quality: '720p', format: null, progressRange: [0, 70] });
  return mediaProcess.fingerprintFrame({ jobId, sourceFile, title: source.title, timestamp, hashSize: params.hash_size, progressRange: [70, 99] });
};
