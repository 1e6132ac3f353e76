// SRT and WebVTT writers for timed text (transcription segments, or translated segments).
import { formatTimestamp } from '../../lib/time';

export interface Cue {
  start: number;
  end: number;
  text: string;
  /** Who says it: SRT cues start with `A: `, WebVTT cues are voice spans `<v A>…</v>`. */
  speaker?: string;
}

/** Cues with text, in time order, each ending after it starts and no earlier than the previous one starts. */
function clean(cues: Cue[]): Cue[] {
  const out: Cue[] = [];
  for (const c of [...cues].sort((a, b) => a.start - b.start)) {
    const text = c.text.replace(/\r/g, '').replace(/\n{2,}/g, '\n').replace(/-->/g, '->').trim();
    if (!text) continue;
    const start = Math.max(0, c.start);
    const end = Math.max(c.end, start + 0.001);
    out.push({ start, end, text, ...(c.speaker ? { speaker: c.speaker } : {}) });
  }
  return out;
}

export function toSrt(cues: Cue[]): string {
  return clean(cues)
    .map((c, i) => `${i + 1}\n${formatTimestamp(c.start, ',')} --> ${formatTimestamp(c.end, ',')}\n${c.speaker ? `${c.speaker}: ` : ''}${c.text}\n`)
    .join('\n');
}

export function toVtt(cues: Cue[]): string {
  const body = clean(cues)
    .map((c) => `${formatTimestamp(c.start, '.')} --> ${formatTimestamp(c.end, '.')}\n${c.speaker ? `<v ${voiceName(c.speaker)}>${c.text}</v>` : c.text}\n`)
    .join('\n');
  return `WEBVTT\n\n${body}`;
}

/** A voice span's annotation ends at `>` and may not hold a line break (WebVTT). */
function voiceName(speaker: string): string {
  return speaker.replace(/[>\r\n]/g, ' ').replace(/&/g, '&amp;');
}
