import { sourceOf } from '../../lib/uploads';
import { mediaFetch, mediaProcess } from '../../workflows/activity-proxies';
import type { OperationRunner } from '../define';
import type { WaveformParams } from './spec';

/**
 * Waveform: check limits and open the audio, then decode it and draw its peaks. A progressive file
 * on an origin that serves ranges is read in place: its whole audio streams through ffmpeg into the
 * peaks, and nothing is stored; anything else is downloaded first.
 */
export const runWaveform: OperationRunner<WaveformParams> = async ({ jobId, params, plan }) => {
  const source = await mediaFetch.resolveSource({ jobId, plan, url: sourceOf(params), quality: 'audio', format: null, reads: 'av', progressRange: [0, 50] });
  return mediaProcess.drawWaveform({ jobId, sourceFile: source.sourceFile, media: source.media, sourceProbe: source.sourceProbe, title: source.title, params, progressRange: [50, 99] });
};
