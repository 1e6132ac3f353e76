// How a long source's audio is split for decoding on several cores: one AAC decoder uses one core, so
// an hour decodes in half the time as two stretches run at once. Pure.
import type { SampleStretch } from '../../engines/ffmpeg/recipes/audio';
import type { ProbeResult } from '../../engines/ffmpeg/ffmpeg.engine';

/** Sources shorter than this decode in one run: below it a second ffmpeg's start and seek cost about what it saves. */
export const SPLIT_FROM_SECONDS = 300;

/**
 * Only MP4-family files are split: their index gives every sample's time, so a seek lands on the
 * sample and the stretches meet exactly. Without one (MP3, ADTS, a Matroska file without cues) a
 * seek may land near the time instead, and the peaks would shift.
 */
export const splittable = (probe: ProbeResult): boolean => /(^|,)(mov|mp4)(,|$)/.test(probe.format?.format_name ?? '');

/**
 * The stretches to decode at once: `decoders` of them at most, each at least half of
 * `splitFromSeconds` long, starting on whole seconds; the last runs to the end, so whatever the
 * duration missed is still decoded.
 */
export function decodeStretches(duration: number, decoders: number, splitFromSeconds = SPLIT_FROM_SECONDS): SampleStretch[] {
  const count = duration >= splitFromSeconds ? Math.max(1, Math.min(decoders, Math.floor(duration / (splitFromSeconds / 2)))) : 1;
  if (count === 1) return [{ from: 0, seconds: null }];
  const starts = Array.from({ length: count }, (_, k) => Math.round((k * duration) / count));
  return starts.map((from, k) => ({ from, seconds: k === count - 1 ? null : starts[k + 1]! - from }));
}
