// Chapters as `GET /v1/info` gives them and downloads keep them: read from a platform's metadata or a
// container, cut and shifted to a clip, written as ffmpeg's metadata file. Pure.

export interface Chapter {
  title: string;
  /** Seconds from the start. */
  start_time: number;
  end_time: number;
}

const ms = (s: number): number => Math.round(s * 1000) / 1000;

/** Chapters from loose records (yt-dlp's `chapters`, ffprobe's), in order, without empty or reversed ones; `duration` ends an open last chapter. */
export function chaptersOf(raw: unknown, duration?: number | null): Chapter[] {
  if (!Array.isArray(raw)) return [];
  const out: Chapter[] = [];
  for (const c of raw as Record<string, unknown>[]) {
    const start = Number(c?.start_time);
    const endRaw = Number(c?.end_time);
    const end = Number.isFinite(endRaw) ? endRaw : Number(duration);
    if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) continue;
    const tags = c.tags as Record<string, unknown> | undefined;
    const title = typeof c.title === 'string' ? c.title : typeof tags?.title === 'string' ? tags.title : '';
    out.push({ title: title || `Chapter ${out.length + 1}`, start_time: ms(Math.max(0, start)), end_time: ms(end) });
  }
  return out.sort((a, b) => a.start_time - b.start_time);
}

/** The chapters that overlap [start, end], cut to it and shifted so the clip starts at 0. */
export function clipChapters(chapters: Chapter[], start: number, end: number): Chapter[] {
  return chapters
    .filter((c) => c.end_time > start + 0.0005 && c.start_time < end - 0.0005)
    .map((c) => ({ title: c.title, start_time: ms(Math.max(c.start_time, start) - start), end_time: ms(Math.min(c.end_time, end) - start) }));
}

/** ffmpeg's metadata file (`;FFMETADATA1`) holding the chapters, for `-map_chapters`. */
export function ffmetadataChapters(chapters: Chapter[]): string {
  const escape = (s: string) => s.replace(/[=;#\\\n]/g, (c) => `\\${c}`);
  const blocks = chapters.map((c) => `[CHAPTER]\nTIMEBASE=1/1000\nSTART=${Math.round(c.start_time * 1000)}\nEND=${Math.round(c.end_time * 1000)}\ntitle=${escape(c.title)}\n`);
  return `;FFMETADATA1\n${blocks.join('')}`;
}
