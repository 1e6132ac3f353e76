import { defineOperation } from '../define';
import { waveformSteps } from './activities';
import { runWaveform } from './runner';
import { waveformSpec } from './spec';
import { showWaveform } from './view';

export const waveform = defineOperation({
  ...waveformSpec,
  runner: runWaveform,
  steps: { queue: 'media-process', create: waveformSteps },
  show: showWaveform,
});
