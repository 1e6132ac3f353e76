import { defineOperation } from '../define';
import { commentsSteps } from './activities';
import { runComments } from './runner';
import { commentsSpec } from './spec';
import { showComments } from './view';

export const comments = defineOperation({
  ...commentsSpec,
  runner: runComments,
  steps: { queue: 'media-fetch', create: commentsSteps },
  show: showComments,
});
