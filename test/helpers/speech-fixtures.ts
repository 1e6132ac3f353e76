import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../lib/config';

/** The shared real recordings with reference texts (read in place, never copied into the repo). */
export const SPEECH_DIR = path.join(projectRoot, '../shared/media/speech');
export const EXPECTED = JSON.parse(fs.readFileSync(path.join(SPEECH_DIR, 'expected.json'), 'utf8')) as Record<string, { language: string; text?: string; text_contains?: string }>;
