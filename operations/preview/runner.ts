import { patched } from '@temporalio/workflow';
import { mediaFetch, mediaProcess } from '../../workflows/activity-proxies';
import { sourceOf } from '../../lib/uploads';
import type { OperationRunner } from '../define';
import type { PreviewParams } from './spec';

/** Preview: check limits, fetch a rendition wide enough for the output (or seek in it in place), render the preview. */
export const runPreview: OperationRunner<PreviewParams> = async ({ jobId, params, plan }) => {
  const quality = params.width <= 1280 ? '720p' : 'best';
  if (patched('source-once-v1')) {
    // a clip needs the sound too; the other previews read only the picture
    const reads = params.preview_type === 'clip' ? 'av' : 'video';
    const source = await mediaFetch.resolveSource({ jobId, plan, url: sourceOf(params), quality, format: null, reads, progressRange: [0, 40] });
    return mediaProcess.makePreview({ jobId, sourceFile: source.sourceFile, media: source.media, sourceProbe: source.sourceProbe, params, progressRange: [40, 99] });
  }
  await mediaFetch.probeSource(sourceOf(params));
  const sourceFile = await mediaFetch.downloadSource({ jobId, url: sourceOf(params), quality, format: null, progressRange: [0, 60] });
  return mediaProcess.makePreview({ jobId, sourceFile, params, progressRange: [60, 99] });
};
