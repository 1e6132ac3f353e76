import { defineOperation } from '../define';
import type * as activities from './activities';
import { runComments } from './runner';
import { commentsSpec } from './spec';
import { showComments } from './view';

export const comments = defineOperation({
  ...commentsSpec,
  runner: runComments,
  // required when its queue's worker builds it: the API and other workers never load its tools
  steps: { queue: 'media-fetch', create: (deps) => (require('./activities') as typeof activities).commentsSteps(deps) },
  show: showComments,
});
