// Speaker labels on recognised speech: the runner's turns (who spoke when) put on words and
// segments, a segment split where its speaker changes, and letters in order of first speech.
// Pure: the writing steps call it, and its spec runs without tools.
import type { SpeakerTurn, WhisperResult, WhisperSegment, WhisperWord } from '../../engines/speech/whisper.engine';

export interface LabelledWord extends WhisperWord {
  speaker: string;
}

export interface LabelledSegment extends Omit<WhisperSegment, 'words'> {
  speaker: string;
  words?: LabelledWord[];
}

export interface SpeakerTotal {
  speaker: string;
  /** Seconds of the speaker's segments. */
  seconds: number;
}

/** A, B, … Z, then S27, S28… (OpenAI and AssemblyAI label speakers with letters). */
export function speakerLetter(index: number): string {
  return index < 26 ? String.fromCharCode(65 + index) : `S${index + 1}`;
}

/** The turn's speaker at time t: the turn that holds it, else the nearest (speech the turns missed by a few frames). */
function speakerAt(turns: SpeakerTurn[], t: number): number {
  let best = turns[0]?.[2] ?? 0;
  let distance = Infinity;
  for (const [start, end, speaker] of turns) {
    const d = t < start ? start - t : t > end ? t - end : 0;
    if (d < distance) {
      distance = d;
      best = speaker;
      if (d === 0) break;
    }
  }
  return best;
}

/** The speaker that holds most of [start, end]: for a segment without word times. */
function speakerOver(turns: SpeakerTurn[], start: number, end: number): number {
  const held = new Map<number, number>();
  for (const [a, b, speaker] of turns) {
    const overlap = Math.min(b, end) - Math.max(a, start);
    if (overlap > 0) held.set(speaker, (held.get(speaker) ?? 0) + overlap);
  }
  if (held.size === 0) return speakerAt(turns, (start + end) / 2);
  return [...held.entries()].sort((x, y) => y[1] - x[1])[0]![0];
}

/**
 * Segments labelled with their speakers. A segment whose words change speaker is split at each
 * change (times from its words, its first and last piece keeping the segment's own bounds; each
 * piece keeps the segment's decoding figures). Speakers are lettered in order of first speech here,
 * whatever the runner numbered them; those in `names` (the known speakers it matched) get their names.
 */
export function labelSpeakers(segments: WhisperSegment[], turns: SpeakerTurn[], joiner = ' ', names: Record<string, string> = {}): { segments: LabelledSegment[]; speakers: SpeakerTotal[] } {
  const letters = new Map<number, string>();
  let lettered = 0;
  // a known speaker is labelled with its name; the others with letters, in order of first speech among them
  const letter = (n: number) => {
    if (!letters.has(n)) letters.set(n, names[String(n)] ?? speakerLetter(lettered++));
    return letters.get(n)!;
  };
  const out: LabelledSegment[] = [];
  for (const seg of segments) {
    const words = seg.words ?? [];
    if (words.length === 0) {
      const { words: _none, ...rest } = seg;
      out.push({ ...rest, speaker: letter(speakerOver(turns, seg.start, seg.end)), ...(seg.words ? { words: [] } : {}) });
      continue;
    }
    const labelled = words.map((w) => ({ ...w, speaker: letter(speakerAt(turns, (w.start + w.end) / 2)) }));
    const pieces: LabelledWord[][] = [];
    for (const w of labelled) {
      const last = pieces[pieces.length - 1];
      if (last && last[0]!.speaker === w.speaker) last.push(w);
      else pieces.push([w]);
    }
    pieces.forEach((piece, i) => {
      out.push({
        ...seg,
        start: i === 0 ? seg.start : piece[0]!.start,
        end: i === pieces.length - 1 ? seg.end : piece[piece.length - 1]!.end,
        text: pieces.length === 1 ? seg.text : piece.map((w) => w.word).join(joiner).trim(),
        speaker: piece[0]!.speaker,
        words: piece,
      });
    });
  }
  const seconds = new Map<string, number>();
  for (const s of out) seconds.set(s.speaker, (seconds.get(s.speaker) ?? 0) + Math.max(0, s.end - s.start));
  const speakers = [...letters.values()].filter((l) => seconds.has(l)).map((speaker) => ({ speaker, seconds: Math.round(seconds.get(speaker)! * 100) / 100 }));
  return { segments: out, speakers };
}

/**
 * One speaker per channel: each channel's recognition, its segments (and words) labelled with the
 * channel's letter and number, merged in time order into one result. The language is that of the
 * channel with most speech; times and durations are the longest channel's, decoding seconds summed.
 */
export function mergeChannels(results: WhisperResult[]): WhisperResult {
  const speech = (r: WhisperResult) => (r.passes.transcribe?.segments ?? []).reduce((a, x) => a + x.end - x.start, 0);
  const main = [...results].sort((a, b) => speech(b) - speech(a))[0]!;
  const tagged = (pass: 'transcribe' | 'translate') =>
    results
      .flatMap((r, channel) => (r.passes[pass]?.segments ?? []).map((seg) => ({ ...seg, speaker: speakerLetter(channel), channel, ...(seg.words ? { words: seg.words.map((w) => ({ ...w, speaker: speakerLetter(channel) })) } : {}) })))
      .sort((a, b) => a.start - b.start || a.channel - b.channel);
  const timings: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.timings)) timings[k] = Math.round(((timings[k] ?? 0) + v) * 1000) / 1000;
  return {
    ...main,
    duration: Math.max(...results.map((r) => r.duration)),
    duration_after_vad: results.reduce((a, r) => a + r.duration_after_vad, 0),
    passes: { transcribe: { segments: tagged('transcribe') }, ...(results.some((r) => r.passes.translate) ? { translate: { segments: tagged('translate') } } : {}) },
    timings,
  };
}

/** Speakers already on the segments (one per channel), with their seconds, in letter order. */
export function speakersOfLabelled(segments: { start: number; end: number; speaker?: string }[]): SpeakerTotal[] {
  const seconds = new Map<string, number>();
  for (const s of segments) if (s.speaker) seconds.set(s.speaker, (seconds.get(s.speaker) ?? 0) + Math.max(0, s.end - s.start));
  return [...seconds.entries()].sort((a, b) => a[0].length - b[0].length || a[0].localeCompare(b[0])).map(([speaker, secs]) => ({ speaker, seconds: Math.round(secs * 100) / 100 }));
}

/** Languages written without spaces between words: a split segment's words are joined as they are. */
export function wordJoiner(language: string): string {
  return ['zh', 'ja', 'th', 'lo', 'my', 'km', 'yue', 'bo'].includes(language) ? '' : ' ';
}
