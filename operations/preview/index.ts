import { defineOperation } from '../define';
import type * as activities from './activities';
import { runPreview } from './runner';
import { previewSpec } from './spec';
import { showPreview } from './view';

export const preview = defineOperation({
  ...previewSpec,
  runner: runPreview,
  // required when its queue's worker builds it: the API and other workers never load its tools
  steps: { queue: 'media-process', create: (deps) => (require('./activities') as typeof activities).previewSteps(deps) },
  show: showPreview,
});
