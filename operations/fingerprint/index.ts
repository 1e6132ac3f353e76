import { defineOperation } from '../define';
import type * as activities from './activities';
import { runFingerprint } from './runner';
import { fingerprintSpec } from './spec';
import { showHashes } from './view';

export const fingerprint = defineOperation({
  ...fingerprintSpec,
  runner: runFingerprint,
  // required when its queue's worker builds it: the API and other workers never load its tools
  steps: { queue: 'media-process', create: (deps) => (require('./activities') as typeof activities).fingerprintSteps(deps) },
  show: showHashes,
});
