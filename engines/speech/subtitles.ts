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

/** A subtitle file's cues (SRT or WebVTT), or null when the text is neither. Timings are kept to the millisecond as written. */
export function parseSubtitles(text: string): { format: 'srt' | 'vtt'; cues: Cue[] } | null {
  const body = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const vtt = /^WEBVTT(?:[ \t][^\n]*)?(?:\n|$)/.test(body);
  const time = vtt ? /^(?:(\d+):)?([0-5]\d):([0-5]\d)\.(\d{3})$/ : /^(\d+):([0-5]\d):([0-5]\d)[,.](\d{3})$/;
  const seconds = (t: string): number | null => {
    const m = time.exec(t.trim());
    return m ? Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]) / 1000 : null;
  };
  const cues: Cue[] = [];
  for (const block of body.split(/\n{2,}/)) {
    const lines = block.split('\n');
    const at = lines.findIndex((l) => l.includes('-->'));
    // the header, NOTE, STYLE and REGION blocks of WebVTT, and an SRT index alone, hold no cue
    if (at < 0 || at > 1) continue;
    const [from = '', rest = ''] = lines[at]!.split('-->');
    const start = seconds(from);
    const end = seconds(rest.trim().split(/\s+/)[0] ?? '');
    if (start === null || end === null) continue;
    const raw = lines.slice(at + 1).join('\n').trim();
    const voice = vtt ? /^<v(?:\.[^ >]*)?\s+([^>]+)>/.exec(raw) : null;
    const plain = raw.replace(/<[^>]*>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&nbsp;/g, ' ').replace(/&amp;/g, '&').trim();
    if (plain) cues.push({ start: Math.round(start * 1000) / 1000, end: Math.round(end * 1000) / 1000, text: plain, ...(voice ? { speaker: voice[1]!.trim() } : {}) });
  }
  if (!cues.length) return null;
  return { format: vtt ? 'vtt' : 'srt', cues };
}

/** Whether a file's name says it is a subtitle file (SRT or WebVTT). */
export function isSubtitleFileName(name: string): boolean {
  return /\.(srt|vtt)$/i.test(name.split(/[?#]/)[0] ?? '');
}

/** The cues that overlap [start, end], cut to it and shifted so that it starts at 0 (a clipped download's subtitles). */
export function clipCues(cues: Cue[], start: number, end: number): Cue[] {
  const ms = (s: number) => Math.round(s * 1000) / 1000;
  return cues
    .filter((c) => c.end > start + 0.0005 && c.start < end - 0.0005)
    .map((c) => ({ ...c, start: ms(Math.max(c.start, start) - start), end: ms(Math.min(c.end, end) - start) }));
}
