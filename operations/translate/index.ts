import { defineOperation } from '../define';
import type * as activities from './activities';
import { runTranslate } from './runner';
import { translateSpec } from './spec';
import { showTranslation } from './view';

// its recognition step is shared with transcribe (activities/speech/recognition.ts); translating the text is its own
export const translate = defineOperation({
  ...translateSpec,
  runner: runTranslate,
  // required when its queue's worker builds it: the API and other workers never load its tools
  steps: { queue: 'media-speech', create: (deps) => (require('./activities') as typeof activities).translateSteps(deps) },
  show: showTranslation,
});
