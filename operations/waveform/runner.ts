import { sourceOf } from '../../lib/uploads';
import { mediaFetch, mediaProcess } from '../../workflows/activity-proxies';
import type { OperationRunner } from '../define';
import type { WaveformParams } from './spec';

/** Waveform: check limits and fetch the audio (the whole of it is drawn), then decode it and draw its peaks. */
export const runWaveform: OperationRunner<WaveformParams> = async ({ jobId, params, plan }) => {
  const source = await mediaFetch.resolveSource({ jobId, plan, url: sourceOf(params), quality: 'audio', format: null, reads: 'whole', progressRange: [0, 50] });
  return mediaProcess.drawWaveform({ jobId, sourceFile: source.sourceFile, sourceProbe: source.sourceProbe, title: source.title, params, progressRange: [50, 99] });
};
