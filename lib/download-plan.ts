// What a download request means, whichever tools carry it out: audio or video output, the
// processing steps in the order they apply, the loudness target, and whether a clip fits a source.
import type { DownloadFormat, Quality } from './media-vocabulary';

const AUDIO_FORMATS: DownloadFormat[] = ['mp3', 'wav'];

/** The output is audio only: quality audio, or an audio format. */
export function isAudioOutput(quality: Quality, format: DownloadFormat | null): boolean {
  return quality === 'audio' || (format !== null && AUDIO_FORMATS.includes(format));
}

/** Processing options of a download, in the order they are applied (normalize last, so its target holds). */
export const PROCESSING_ORDER = ['denoise', 'trim_silence', 'normalize'] as const;
export type ProcessingOption = (typeof PROCESSING_ORDER)[number];

/** Target of `normalize`: integrated loudness (LUFS) and maximum true peak (dBTP). */
export const LOUDNESS_TARGET = { integrated: -16, truePeak: -1.5 } as const;

/** Sorts the requested options into the order they are applied; drops duplicates. */
export function processingSteps(processing: readonly string[] | null): ProcessingOption[] {
  const want = new Set(processing ?? []);
  return PROCESSING_ORDER.filter((p) => want.has(p));
}

/** Why a clip range does not fit a source of `duration` seconds, or null when it does. */
export function clipProblem(clipStart: number | null, clipEnd: number | null, duration: number): string | null {
  const secs = (n: number) => `${Math.round(n * 1000) / 1000} s`;
  if (clipStart !== null && clipStart >= duration) return `clip_start (${secs(clipStart)}) is past the end of the source, which is ${secs(duration)} long`;
  // a little slack: container and stream durations differ by a frame or so
  if (clipEnd !== null && clipEnd > duration + 0.05) return `clip_end (${secs(clipEnd)}) is past the end of the source, which is ${secs(duration)} long`;
  return null;
}

/** The Whisper model a download's subtitles are recognised with (multilingual: the language is detected). */
export const SUBTITLE_SPEECH_MODEL = 'base' as const;

/** What subtitles from speech add to a download: recognising it once, and each language translated into. */
export const SUBTITLE_COST = { speech: 4, translation: 1 } as const;

/** The most a download's subtitles can cost: speech recognised and every language translated (what was not needed is refunded on completion); platform tracks are free. */
export function subtitlesCost(subtitles: { source: string; languages: string[] } | null | undefined): number {
  if (!subtitles || subtitles.source === 'platform') return 0;
  return SUBTITLE_COST.speech + SUBTITLE_COST.translation * subtitles.languages.length;
}
