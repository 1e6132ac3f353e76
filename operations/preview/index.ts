import { defineOperation } from '../define';
import { previewSteps } from './activities';
import { runPreview } from './runner';
import { previewSpec } from './spec';
import { showPreview } from './view';

export const preview = defineOperation({
  ...previewSpec,
  runner: runPreview,
  steps: { queue: 'media-process', create: previewSteps },
  show: showPreview,
});
