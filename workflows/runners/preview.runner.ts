import { mediaFetch, mediaProcess } from '../activity-proxies';
import type { OperationRunner } from './types';

/** Preview: check limits, fetch a rendition wide enough for the output, render the preview. */
export const runPreview: OperationRunner<'preview'> = async ({ jobId, params }) => {
  await mediaFetch.probeSource(params.url);
  const quality = params.width <= 1280 ? '720p' : 'best';
  const sourceFile = await mediaFetch.downloadSource({ jobId, url: params.url, quality, format: null, progressRange: [0, 60] });
  return mediaProcess.makePreview({ jobId, sourceFile, params, progressRange: [60, 99] });
};
