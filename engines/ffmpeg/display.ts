// What a player shows of a video stream: its display rotation applied and its pixels made square.
// Pure: ffprobe's stream in, the displayed picture size and the filters that draw it out.
import type { ProbeStream } from './ffmpeg.engine';

/** The stream's display rotation in degrees (0, 90, 180 or 270), from its display matrix. */
export function displayRotation(stream: Pick<ProbeStream, 'side_data_list' | 'tags'>): number {
  const matrix = stream.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? Number(stream.tags?.rotate ?? 0);
  const turns = Math.round(Number(matrix) / 90);
  return Number.isFinite(turns) ? (((turns % 4) + 4) % 4) * 90 : 0;
}

/** The sample (pixel) aspect ratio as a number; 1 when unknown or unset ("0:1", "N/A"). */
export function sampleAspect(stream: Pick<ProbeStream, 'sample_aspect_ratio'>): number {
  const [num, den] = (stream.sample_aspect_ratio ?? '').split(':').map(Number);
  return num && den && num > 0 && den > 0 ? num / den : 1;
}

/**
 * The picture a player shows: stored pixels stretched by the sample aspect, then turned by the
 * display rotation. Null without a stored size.
 */
export function displaySize(stream: ProbeStream | undefined): { width: number; height: number } | null {
  if (!stream?.width || !stream.height) return null;
  const width = Math.round(stream.width * sampleAspect(stream));
  const quarter = displayRotation(stream) % 180 === 90;
  return quarter ? { width: stream.height, height: width } : { width, height: stream.height };
}

/*
 * The filters below run after ffmpeg's own autorotation (on by default for every decoded input), so
 * `iw`, `ih` and `sar` are already the turned picture's: what is left is the pixel aspect.
 */

/**
 * Scaled to `width` displayed pixels wide, the height from the display aspect (`dar`, the sample
 * aspect included) rather than the stored one, square pixels out; `even` rounds the height to an
 * even number, which H.264 in 4:2:0 needs.
 */
export function displayScale(width: number, opts: { even?: boolean } = {}): string {
  const height = opts.even ? 'max(2\\,trunc(ow/dar/2+0.5)*2)' : 'max(1\\,round(ow/dar))';
  return `scale=${width}:${height}:flags=lanczos,setsar=1`;
}

/**
 * The displayed picture at its own size with square pixels, each side rounded down to an even
 * number: what a re-encode into H.264 4:2:0 (or VP9) needs of any source, odd-sized or anamorphic.
 */
export const DISPLAY_EVEN = 'scale=max(2\\,trunc(iw*sar/2)*2):max(2\\,trunc(ih/2)*2):flags=lanczos,setsar=1';

/** The displayed picture at its own size with square pixels (a still: any size will do). */
export const DISPLAY_SQUARE = 'scale=max(1\\,round(iw*sar)):ih:flags=lanczos,setsar=1';
