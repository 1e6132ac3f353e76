// Two recognitions of the same audio lined up: the English pass's text, segment by segment, onto the
// original segments it overlaps (per channel when each speaker has one).
import type { WhisperSegment } from '../../engines/speech/whisper.engine';
import { joinText } from './recognition';

/** alignByTime within each channel, when the segments come from several (one speaker per channel): a channel's English never lands on another's speech. */
export function alignByChannel(originals: Pick<WhisperSegment, 'start' | 'end' | 'channel'>[], other: Pick<WhisperSegment, 'start' | 'end' | 'text' | 'channel'>[]): string[] {
  const channels = new Set(originals.map((o) => o.channel));
  if (channels.size <= 1) return alignByTime(originals, other);
  const out: string[] = originals.map(() => '');
  for (const channel of channels) {
    const mine = originals.map((o, i) => [o, i] as const).filter(([o]) => o.channel === channel);
    const texts = alignByTime(mine.map(([o]) => o), other.filter((x) => x.channel === channel));
    mine.forEach(([, i], k) => (out[i] = texts[k] ?? ''));
  }
  return out;
}

/**
 * One text per original segment from a second segmentation of the same audio (Whisper's English
 * translation pass): each translated segment goes to the original segment it overlaps most.
 */
export function alignByTime(originals: Pick<WhisperSegment, 'start' | 'end'>[], other: Pick<WhisperSegment, 'start' | 'end' | 'text'>[]): string[] {
  const buckets: string[][] = originals.map(() => []);
  if (originals.length === 0) return [];
  for (const seg of other) {
    let best = -1;
    let bestScore = -Infinity;
    originals.forEach((o, i) => {
      const overlap = Math.min(o.end, seg.end) - Math.max(o.start, seg.start);
      // no overlap: the nearest segment (negative distance) still wins over nothing
      if (overlap > bestScore) {
        bestScore = overlap;
        best = i;
      }
    });
    buckets[best]!.push(seg.text);
  }
  return buckets.map((b) => joinText(b));
}
