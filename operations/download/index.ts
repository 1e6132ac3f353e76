import { defineOperation } from '../define';
import type * as activities from './activities';
import { runDownload } from './runner';
import { downloadSpec } from './spec';
import { showDownload } from './view';

export const download = defineOperation({
  ...downloadSpec,
  runner: runDownload,
  // required when its queue's worker builds it: the API and other workers never load its tools
  steps: { queue: 'media-process', create: (deps) => (require('./activities') as typeof activities).downloadSteps(deps) },
  show: showDownload,
});
