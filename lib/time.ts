/**
 * Longest time a request may name: 100,000,000 s (about three years). Anything longer is a typo or an
 * attack (400 nines parse to Infinity); every string the pattern below admits is within it.
 */
export const MAX_TIME_SECONDS = 100_000_000;

/**
 * Parses `HH:MM:SS`, `MM:SS` or seconds (number or numeric string, fractions allowed) into seconds.
 * Returns null when the value is not a valid time, not finite, or longer than MAX_TIME_SECONDS.
 */
export function parseTimeString(value: string | number): number | null {
  const seconds = typeof value === 'number' ? value : parseText(value.trim());
  return seconds !== null && Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_TIME_SECONDS ? seconds : null;
}

function parseText(s: string): number | null {
  if (/^\d{1,8}(\.\d{1,9})?$/.test(s)) return Number(s);
  const m = /^(?:(\d{1,4}):)?([0-5]?\d):([0-5]\d(?:\.\d{1,9})?)$/.exec(s);
  if (!m) return null;
  const [, h, mm, ss] = m;
  return Number(h ?? 0) * 3600 + Number(mm) * 60 + Number(ss);
}

/** The pattern a time string must match (OpenAPI), equivalent to parseText's rules. */
export const TIME_STRING_PATTERN = '^(\\d{1,8}(\\.\\d{1,9})?|(\\d{1,4}:)?[0-5]?\\d:[0-5]\\d(\\.\\d{1,9})?)$';

/** Formats seconds as `HH:MM:SS.mmm` (fingerprints, VTT) or `HH:MM:SS,mmm` (SRT); negative times clamp to 0. */
export function formatTimestamp(seconds: number, sep: ',' | '.' = '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${sep}${pad(ms % 1000, 3)}`;
}
