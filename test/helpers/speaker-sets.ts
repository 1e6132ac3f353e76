// The speaker-label evaluation sets (test/speakers/sets.py): conversations with known turns, a `dev`
// set diarize.py's constants were chosen on and a `test` set they are judged on, with reference clips
// of the synthetic voices for known speakers.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

export const SPEAKER_SETS_DIR = path.join(__dirname, '..', '..', '..', 'test', 'speakers');

export interface SetTurn {
  start: number;
  end: number;
  /** Index into the conversation's voices. */
  speaker: number;
  voice: string;
}

export interface SetConversation {
  name: string;
  file: string;
  voices: string[];
  speakers: number;
  same_sex: boolean;
  /** Voices made from (or being) recordings of people. */
  recorded: number;
  /** Voices that are recordings of real people. */
  real_people: number;
  duration: number;
  turns: SetTurn[];
}

/** A set's conversations (built once, cached under the temp folder) and reference clips of `voices`. */
export async function speakerSet(python: string, which: 'dev' | 'test', voices: string[] = []): Promise<{ conversations: SetConversation[]; references: Record<string, string> }> {
  const { stdout } = await promisify(execFile)(python, [path.join(SPEAKER_SETS_DIR, 'sets.py'), '--json', which, ...voices], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as { conversations: SetConversation[]; references: Record<string, string> };
}

/** The turn speaking at time t (the one holding it, else the nearest). */
export function turnAt(conv: SetConversation, t: number): SetTurn {
  const distance = (turn: SetTurn) => Math.max(turn.start - t, t - turn.end, 0);
  return conv.turns.reduce((best, turn) => (distance(turn) < distance(best) ? turn : best));
}
