import type { DownloadParams, JobOutput } from '../lib/job.types';
import { fetch, process } from './activities';

/** Download operation: check limits, fetch the rendition, deliver it in the requested format. */
export async function runDownload(jobId: string, params: DownloadParams): Promise<JobOutput> {
  const source = await fetch.probeSource(params.url);
  const sourceFile = await fetch.downloadSource({ jobId, url: params.url, quality: params.quality, format: params.format, progressRange: [0, 80] });
  return process.finalizeDownload({ jobId, sourceFile, quality: params.quality, format: params.format, title: source.title, progressRange: [80, 99] });
}
