import type { JobOutput, PreviewParams } from '../lib/job.types';
import { fetch, process } from './activities';

/** Preview operation: check limits, fetch a rendition wide enough for the output, render the preview. */
export async function runPreview(jobId: string, params: PreviewParams): Promise<JobOutput> {
  await fetch.probeSource(params.url);
  const quality = params.width <= 1280 ? '720p' : 'best';
  const sourceFile = await fetch.downloadSource({ jobId, url: params.url, quality, format: null, progressRange: [0, 60] });
  return process.makePreview({ jobId, sourceFile, params, progressRange: [60, 99] });
}
