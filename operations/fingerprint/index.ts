import { defineOperation } from '../define';
import { fingerprintSteps } from './activities';
import { runFingerprint } from './runner';
import { fingerprintSpec } from './spec';
import { showHashes } from './view';

export const fingerprint = defineOperation({
  ...fingerprintSpec,
  runner: runFingerprint,
  steps: { queue: 'media-process', create: fingerprintSteps },
  show: showHashes,
});
