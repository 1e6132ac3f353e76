import { defineOperation } from '../define';
import type * as activities from './activities';
import { runTranscribe } from './runner';
import { transcribeSpec } from './spec';
import { showTranscript } from './view';

// its recognition step is shared with translate (activities/speech/recognition.ts); writing the transcript is its own
export const transcribe = defineOperation({
  ...transcribeSpec,
  runner: runTranscribe,
  // required when its queue's worker builds it: the API and other workers never load its tools
  steps: { queue: 'media-speech', create: (deps) => (require('./activities') as typeof activities).transcribeSteps(deps) },
  show: showTranscript,
});
