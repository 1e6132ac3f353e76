// Parsers for what ffmpeg's measuring filters log (loudnorm, ebur128, silencedetect). Pure functions.

/** loudnorm's first-pass measurement (print_format=json). */
export interface LoudnormMeasurement {
  input_i: number;
  input_tp: number;
  input_lra: number;
  input_thresh: number;
  target_offset: number;
}

/** Parses the JSON block loudnorm prints at the end of a run; null when absent. */
export function parseLoudnorm(log: string): LoudnormMeasurement | null {
  const at = log.lastIndexOf('[Parsed_loudnorm');
  if (at < 0) return null;
  const m = /\{[^{}]*\}/.exec(log.slice(at));
  if (!m) return null;
  let raw: Record<string, string>;
  try {
    raw = JSON.parse(m[0]) as Record<string, string>;
  } catch {
    return null;
  }
  const out = {
    input_i: Number(raw.input_i),
    input_tp: Number(raw.input_tp),
    input_lra: Number(raw.input_lra),
    input_thresh: Number(raw.input_thresh),
    target_offset: Number(raw.target_offset),
  };
  // "-inf" (silence) parses to NaN: no usable measurement
  return Object.values(out).every(Number.isFinite) ? out : null;
}

/** ebur128's summary: integrated loudness, loudness range and (with peak=true) true peak. */
export interface Ebur128Summary {
  integrated: number;
  lra: number;
  truePeak: number | null;
}

export function parseEbur128Summary(log: string): Ebur128Summary | null {
  const at = log.lastIndexOf('Summary:');
  if (at < 0) return null;
  const tail = log.slice(at);
  const i = /I:\s+(-?[\d.]+|-inf) LUFS/.exec(tail);
  const lra = /LRA:\s+(-?[\d.]+) LU/.exec(tail);
  const peak = /Peak:\s+(-?[\d.]+|-inf) dBFS/.exec(tail);
  if (!i || !lra) return null;
  return { integrated: Number(i[1]), lra: Number(lra[1]), truePeak: peak ? Number(peak[1]) : null };
}

export interface Silence {
  start: number;
  /** End of the silence; the end of the stream when the silence lasts to it. */
  end: number;
}

/** Collects silencedetect's silence_start / silence_end lines into intervals. */
export function parseSilences(lines: string[], streamEnd: number): Silence[] {
  const out: Silence[] = [];
  let open: number | null = null;
  for (const line of lines) {
    const s = /silence_start: (-?[\d.e+-]+)/.exec(line);
    if (s) {
      open = Math.max(0, Number(s[1]));
      continue;
    }
    const e = /silence_end: (-?[\d.e+-]+)/.exec(line);
    if (e && open !== null) {
      out.push({ start: open, end: Number(e[1]) });
      open = null;
    }
  }
  if (open !== null) out.push({ start: open, end: streamEnd });
  return out;
}

/**
 * The part of a stream of `duration` seconds that is left once the silence at its start and at its
 * end is removed (silence in the middle stays). Null when the stream is silent throughout.
 */
export function soundSpan(silences: Silence[], duration: number, tolerance = 0.05): { start: number; end: number } | null {
  let start = 0;
  let end = duration;
  const first = silences[0];
  if (first && first.start <= tolerance) start = first.end;
  const last = silences[silences.length - 1];
  if (last && last.end >= duration - tolerance && last.start > start) end = last.start;
  if (first && first.start <= tolerance && first.end >= duration - tolerance) return null;
  return end > start ? { start, end } : null;
}
