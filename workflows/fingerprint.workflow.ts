import { ApplicationFailure } from '@temporalio/workflow';
import { FAILURE_TYPES, type FingerprintParams, type JobOutput } from '../lib/job.types';
import { parseTimeString } from '../lib/time';
import { fetch, process } from './activities';

/** Fingerprint operation: check limits, fetch a 720p rendition, hash one frame. */
export async function runFingerprint(jobId: string, params: FingerprintParams): Promise<JobOutput> {
  const source = await fetch.probeSource(params.url);
  const timestamp = params.timestamp === null ? null : parseTimeString(params.timestamp);
  if (timestamp !== null && source.duration !== null && timestamp >= source.duration) {
    throw ApplicationFailure.nonRetryable(`timestamp (${timestamp} s) is past the end of the source, which is ${source.duration} s long`, FAILURE_TYPES.rejected);
  }
  const sourceFile = await fetch.downloadSource({ jobId, url: params.url, quality: '720p', format: null, progressRange: [0, 70] });
  return process.fingerprintFrame({ jobId, sourceFile, title: source.title, timestamp, hashSize: params.hash_size, progressRange: [70, 99] });
}
