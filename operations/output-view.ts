// How the dashboard shows a completed job's output: the kinds of view a page can draw, and what an
// operation's view (operations/<name>/view.ts) is given to choose one.
import type { Comment } from '../engines/comments/provider';

/** Top-level comments shown inline; the file has them all. */
export const MAX_INLINE_COMMENTS = 200;

export interface Segment {
  start: number | null;
  end: number | null;
  text: string;
  original?: string;
  /** Who says it, when the job labelled speakers. */
  speaker?: string;
}

export type JobOutputView =
  | { kind: 'none' }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'image'; url: string; width: number | null; height: number | null; animated: boolean }
  | { kind: 'video'; url: string; width: number | null; height: number | null }
  | { kind: 'audio'; url: string }
  | { kind: 'transcript'; language: string | null; segments: Segment[] }
  | { kind: 'translation'; sourceLanguage: string | null; targetLanguage: string | null; segments: Segment[] }
  | { kind: 'comments'; title: string; comments: Comment[]; topLevelTotal: number }
  /** Scrubbing thumbnails: the sprite and where each tile is, with its time. */
  | { kind: 'storyboard'; spriteUrl: string; width: number; height: number; tiles: { start: number; end: number; x: number; y: number; w: number; h: number }[] }
  /** Named values: hex hashes (code), or a data file's key figures. */
  | { kind: 'figures'; figures: [string, string][]; code: boolean };

/** A completed job, as an operation's view sees it. */
export interface OutputContext {
  /** The job's result_data. */
  result: Record<string, unknown>;
  /** The signed link to its output, or null once expired. */
  downloadUrl: string | null;
  /** The output file's text, or null when it is too large to show or no longer stored. */
  readText(): Promise<string | null>;
  /** The signed link to another of the job's files by name, or null (none by that name, or expired). */
  fileUrl(name: string): string | null;
}

export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export const EXPIRED: JobOutputView = { kind: 'unavailable', reason: 'The output file has expired.' };
export const TOO_LARGE: JobOutputView = { kind: 'unavailable', reason: 'The output is too large to show here or no longer stored; use the download link.' };

/** `HH:MM:SS,mmm`, `HH:MM:SS.mmm` or `MM:SS.mmm` → seconds. */
function cueTime(t: string): number | null {
  const m = /^(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})$/.exec(t.trim());
  if (!m) return null;
  return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]!.padEnd(3, '0')) / 1000;
}

/** The cues of an SRT or WebVTT file. */
export function parseCues(text: string): Segment[] {
  return text
    .replace(/\r/g, '')
    .split(/\n{2,}/)
    .map((block) => {
      const lines = block.split('\n');
      const at = lines.findIndex((l) => l.includes('-->'));
      if (at < 0) return null;
      const [from = '', to = ''] = lines[at]!.split('-->');
      const text = lines.slice(at + 1).join(' ').trim();
      // a WebVTT voice span names the speaker
      const voice = /^<v(?:\.[^ >]*)? ([^>]+)>(.*?)(?:<\/v>)?$/.exec(text);
      return { start: cueTime(from), end: cueTime(to.trim().split(/\s+/)[0] ?? ''), text: voice ? voice[2]!.trim() : text, ...(voice ? { speaker: voice[1]!.trim() } : {}) };
    })
    .filter((c): c is Segment => c !== null && c.text !== '');
}

/** The segments of a transcript or translation JSON file. */
export function segmentsOf(json: unknown): Segment[] {
  const list = (json as { segments?: unknown }).segments;
  return Array.isArray(list)
    ? list.map((s: Record<string, unknown>) => ({
        start: num(s.start),
        end: num(s.end),
        text: str(s.text) ?? '',
        ...(typeof s.original === 'string' ? { original: s.original } : {}),
        ...(typeof s.speaker === 'string' ? { speaker: s.speaker } : {}),
      }))
    : [];
}

/** A job's output read as its segments (JSON, SRT or WebVTT, by result_data.output_format), or null when it cannot be read. */
export async function speechSegments(job: OutputContext): Promise<Segment[] | null> {
  const content = await job.readText();
  if (content === null) return null;
  return (str(job.result.output_format) ?? 'json') === 'json' ? segmentsOf(JSON.parse(content)) : parseCues(content);
}
