import { defineOperation } from '../define';
import type * as activities from './activities';
import { runWaveform } from './runner';
import { waveformSpec } from './spec';
import { showWaveform } from './view';

export const waveform = defineOperation({
  ...waveformSpec,
  runner: runWaveform,
  // required when its queue's worker builds it: the API and other workers never load its tools
  steps: { queue: 'media-process', create: (deps) => (require('./activities') as typeof activities).waveformSteps(deps) },
  show: showWaveform,
});
