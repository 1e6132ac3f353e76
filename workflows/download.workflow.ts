import { ApplicationFailure } from '@temporalio/workflow';
import { clipProblem } from '../lib/edit-plan';
import { FAILURE_TYPES, type DownloadParams, type JobOutput } from '../lib/job.types';
import { parseTimeString } from '../lib/time';
import { fetch, process } from './activities';

/** Download operation: check limits, fetch the rendition, deliver it in the requested format. */
export async function runDownload(jobId: string, params: DownloadParams): Promise<JobOutput> {
  const source = await fetch.probeSource(params.url);
  const clipStart = params.clip_start === null ? null : parseTimeString(params.clip_start);
  const clipEnd = params.clip_end === null ? null : parseTimeString(params.clip_end);
  const processing = params.processing ?? [];
  if (clipStart === null && clipEnd === null && processing.length === 0) {
    // The plain path: exactly these three activities (recorded histories replay against it).
    const sourceFile = await fetch.downloadSource({ jobId, url: params.url, quality: params.quality, format: params.format, progressRange: [0, 80] });
    return process.finalizeDownload({ jobId, sourceFile, quality: params.quality, format: params.format, title: source.title, progressRange: [80, 99] });
  }
  // A clip past the end is known once the source is probed: fail before downloading anything.
  const problem = source.duration === null ? null : clipProblem(clipStart, clipEnd, source.duration);
  if (problem) throw ApplicationFailure.nonRetryable(problem, FAILURE_TYPES.rejected);
  const sourceFile = await fetch.downloadSource({ jobId, url: params.url, quality: params.quality, format: params.format, progressRange: [0, 50] });
  return process.processDownload({
    jobId,
    sourceFile,
    quality: params.quality,
    format: params.format,
    title: source.title,
    clipStart,
    clipEnd,
    processing,
    progressRange: [50, 99],
  });
}
