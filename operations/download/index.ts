import { defineOperation } from '../define';
import { downloadSteps } from './activities';
import { runDownload } from './runner';
import { downloadSpec } from './spec';
import { showDownload } from './view';

export const download = defineOperation({
  ...downloadSpec,
  runner: runDownload,
  steps: { queue: 'media-process', create: downloadSteps },
  show: showDownload,
});
