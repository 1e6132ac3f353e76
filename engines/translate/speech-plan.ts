// How speech in one language becomes text in another: Whisper's own speech → English translation,
// Apertium text translation (direct, through English, or the shortest path), or both (Whisper to
// English, then Apertium from English).
import { planRoute, type LanguagePair } from './translation-engine';

export type SpeechTranslationPlan =
  /** Source and target are the same language: the transcription is the result. */
  | { kind: 'same' }
  /** Target English: Whisper's translate task. */
  | { kind: 'whisper' }
  /** Transcribe, then translate the text along `route` (source … target). */
  | { kind: 'text'; route: string[] }
  /** Whisper translates the speech to English, then the text goes along `route` (en … target). */
  | { kind: 'whisper+text'; route: string[] };

export function planSpeechTranslation(pairs: LanguagePair[], source: string, target: string): SpeechTranslationPlan | null {
  if (source === target) return { kind: 'same' };
  if (target === 'en') return { kind: 'whisper' };
  const route = planRoute(pairs, source, target);
  if (route) return { kind: 'text', route };
  const fromEnglish = planRoute(pairs, 'en', target);
  if (fromEnglish) return { kind: 'whisper+text', route: fromEnglish };
  return null;
}

/** Whether some source language reaches `target` (for requests that leave the source to detection). */
export function targetReachable(pairs: LanguagePair[], target: string): boolean {
  return target === 'en' || planRoute(pairs, 'en', target) !== null || pairs.some((p) => p.to === target);
}

/** Languages any speech can be translated into: English (Whisper) and everything reachable from English. */
export function targetsFromAnySpeech(pairs: LanguagePair[]): string[] {
  const langs = new Set<string>(['en']);
  for (const p of pairs) if (planRoute(pairs, 'en', p.to)) langs.add(p.to);
  return [...langs].sort();
}
