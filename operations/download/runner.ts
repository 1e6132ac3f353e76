import { patched } from '@temporalio/workflow';
import { clipProblem } from '../../lib/download-plan';
import { JobFailure } from '../../lib/job-failure';
import { parseTimeString } from '../../lib/time';
import { mediaFetch, mediaProcess } from '../../workflows/activity-proxies';
import { sourceOf } from '../../lib/uploads';
import type { OperationRunner } from '../define';
import type { DownloadParams } from './spec';

/** Download: check limits, fetch the rendition, deliver it in the requested format (clipped and processed if asked). */
export const runDownload: OperationRunner<DownloadParams> = async ({ jobId, params, plan }) => {
  const clipStart = params.clip_start === null ? null : parseTimeString(params.clip_start);
  const clipEnd = params.clip_end === null ? null : parseTimeString(params.clip_end);
  const processing = params.processing ?? [];
  if (patched('source-once-v1')) {
    // one step for the source: limits, clip range and download from a single yt-dlp extraction (none for a plain file)
    const plain = clipStart === null && clipEnd === null && processing.length === 0;
    const source = await mediaFetch.resolveSource({ jobId, plan, url: sourceOf(params), quality: params.quality, format: params.format, reads: 'whole', clipStart, clipEnd, progressRange: [0, plain ? 80 : 50] });
    const sourceFile = source.sourceFile!;
    if (plain) return mediaProcess.finalizeDownload({ jobId, sourceFile, quality: params.quality, format: params.format, title: source.title, progressRange: [80, 99] });
    return mediaProcess.processDownload({ jobId, sourceFile, quality: params.quality, format: params.format, title: source.title, clipStart, clipEnd, processing, progressRange: [50, 99] });
  }
  const source = await mediaFetch.probeSource(sourceOf(params));
  if (clipStart === null && clipEnd === null && processing.length === 0) {
    // The plain path: exactly these three activities (recorded histories replay against it).
    const sourceFile = await mediaFetch.downloadSource({ jobId, url: sourceOf(params), quality: params.quality, format: params.format, progressRange: [0, 80] });
    return mediaProcess.finalizeDownload({ jobId, sourceFile, quality: params.quality, format: params.format, title: source.title, progressRange: [80, 99] });
  }
  // A clip past the end is known once the source is probed: fail before downloading anything.
  const problem = source.duration === null ? null : clipProblem(clipStart, clipEnd, source.duration);
  if (problem) throw JobFailure.user('rejected', problem);
  const sourceFile = await mediaFetch.downloadSource({ jobId, url: sourceOf(params), quality: params.quality, format: params.format, progressRange: [0, 50] });
  return mediaProcess.processDownload({
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
};
