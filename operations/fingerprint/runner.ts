import { patched } from '@temporalio/workflow';
import { JobFailure } from '../../lib/job-failure';
import { parseTimeString } from '../../lib/time';
import { mediaFetch, mediaProcess } from '../../workflows/activity-proxies';
import { sourceOf } from '../../lib/uploads';
import type { OperationRunner } from '../define';
import type { FingerprintParams } from './spec';

/** Fingerprint: check limits, fetch a 720p rendition (or seek in it in place), hash one frame. */
export const runFingerprint: OperationRunner<FingerprintParams> = async ({ jobId, params, plan }) => {
  const timestamp = params.timestamp === null ? null : parseTimeString(params.timestamp);
  const pastEnd = (duration: number | null) => {
    if (timestamp !== null && duration !== null && timestamp >= duration) {
      throw JobFailure.user('rejected', `timestamp (${timestamp} s) is past the end of the source, which is ${duration} s long`);
    }
  };
  // one step for the source (one yt-dlp run at most; a seekable file is not downloaded at all)
  if (patched('source-once-v1')) {
    const source = await mediaFetch.resolveSource({ jobId, plan, url: sourceOf(params), quality: '720p', format: null, reads: 'video', progressRange: [0, 40] });
    pastEnd(source.duration);
    return mediaProcess.fingerprintFrame({ jobId, sourceFile: source.sourceFile, media: source.media, sourceProbe: source.sourceProbe, title: source.title, timestamp, hashSize: params.hash_size, progressRange: [40, 99] });
  }
  const source = await mediaFetch.probeSource(sourceOf(params));
  pastEnd(source.duration);
  const sourceFile = await mediaFetch.downloadSource({ jobId, url: sourceOf(params), quality: '720p', format: null, progressRange: [0, 70] });
  return mediaProcess.fingerprintFrame({ jobId, sourceFile, title: source.title, timestamp, hashSize: params.hash_size, progressRange: [70, 99] });
};
