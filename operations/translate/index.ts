import { defineOperation } from '../define';
import { runTranslate } from './runner';
import { translateSpec } from './spec';
import { showTranslation } from './view';

// its steps (speech recognition, translation) are shared with transcribe: activities/speech.activities.ts
export const translate = defineOperation({ ...translateSpec, runner: runTranslate, steps: null, show: showTranslation });
