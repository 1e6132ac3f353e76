import { defineOperation } from '../define';
import { runTranscribe } from './runner';
import { transcribeSpec } from './spec';
import { showTranscript } from './view';

// its steps (speech recognition, the transcript file) are shared with translate: activities/speech.activities.ts
export const transcribe = defineOperation({ ...transcribeSpec, runner: runTranscribe, steps: null, show: showTranscript });
