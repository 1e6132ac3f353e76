// ffmpeg recipes of the four previews. Pure: the plan (times already checked against the source) and
// how to open the source (`input`, which puts seek options before `-i`) in, the argument list out.
import { h264 } from './codecs';
import { displayScale } from '../display';
import { formatTimestamp } from '../../../lib/time';

/** Opens the source with the given options before `-i` (a file, or a URL read through the egress proxy). */
export type InputOf = (before: string[]) => string[];

export interface PreviewRecipe {
  args: string[];
  /** Seconds of media the run covers, for progress. */
  covers: number;
}

export function gifRecipe(input: InputOf, p: { start: number; length: number; fps: number; width: number }, out: string): PreviewRecipe {
  // the palette is made at the end of the input, so the read stops at -t; trim makes the length exact
  // where streams start at different times (MPEG-TS: see timeWindow)
  const graph = `[0:v:0]trim=duration=${p.length.toFixed(3)},fps=${p.fps},${displayScale(p.width)},split[a][b];[a]palettegen=stats_mode=diff[pal];[b][pal]paletteuse=dither=bayer:bayer_scale=5`;
  return { args: [...input(['-ss', p.start.toFixed(3), '-t', p.length.toFixed(3)]), '-filter_complex', graph, '-loop', '0', '-y', out], covers: p.length };
}

const JPEG = ['-q:v', '2', '-update', '1', '-f', 'image2', '-c:v', 'mjpeg'];

export function thumbnailRecipe(input: InputOf, p: { at: number; width: number }, out: string): PreviewRecipe {
  return { args: [...input(['-ss', p.at.toFixed(3)]), '-map', '0:v:0', '-frames:v', '1', '-vf', displayScale(p.width), ...JPEG, '-y', out], covers: 1 };
}

/**
 * A URL's source this small (up to 64 MB, and as many pixels as 90 s of 720p, about a second of
 * decoding) is decoded once rather than seeked per tile. The seek reads each open the URL and stream
 * ahead of their frame until the last tile is taken: a 60 s 720p source took 2.3 s and 342 MB over
 * loopback that way against 1.4 s and 50 MB in one pass, and a 600 s 45 MB one took 58 MB from a
 * 100 Mbit/s origin. Larger sources keep the seeks, as decoding them whole would take longer still; on
 * a local file the seeks stay quicker (0.7 s against 1.2 s for 60 s of 720p).
 */
const ONE_PASS = { pixelSeconds: 90 * 1280 * 720, bytes: 64 * 1024 * 1024 };

/** Whether one decode of a URL's source gives every tile its own frame, cheaper than a seek per tile. */
export function mosaicReadsOnce(video: { width?: number; height?: number; avg_frame_rate?: string }, times: number[], length: number, bytes?: number): boolean {
  const pixels = (video.width ?? 0) * (video.height ?? 0);
  if (!pixels || length * pixels > ONE_PASS.pixelSeconds || (bytes ?? 0) > ONE_PASS.bytes) return false;
  const frame = frameSeconds(video);
  // two tiles closer than two frames could fall on one frame, which select passes only once
  return times.every((t, i) => t - (i === 0 ? 0 : times[i - 1]!) >= 2 * frame);
}

/**
 * A mosaic of a short source read over the network (see mosaicReadsOnce): one sequential decode, each
 * tile the first frame whose time reaches the tile's, picked by select. Any other mosaic seeks per
 * tile (mosaicTileRuns); either way a tile is the first frame at or after its time.
 */
export function mosaicOnePassRecipe(input: InputOf, p: { times: number[]; columns: number; rows: number; width: number }, out: string): PreviewRecipe {
  const tile = Math.ceil(p.width / p.columns);
  const pick = p.times.map((t) => `gte(t,${t.toFixed(3)})*lt(prev_t,${t.toFixed(3)})`).join('+');
  const graph = `[0:v:0]setpts=PTS-STARTPTS,select='${pick}',${displayScale(tile)},tile=${p.columns}x${p.rows},scale=${p.width}:-1:flags=lanczos`;
  return { args: [...input([]), '-filter_complex', graph, '-frames:v', '1', ...JPEG, '-y', out], covers: 1 };
}

/**
 * Tiles per ffmpeg run when a mosaic seeks. Each seeking input holds its own demuxer and decoder
 * (about 17 MB of 720p beside ffmpeg's 70 MB): 16 inputs in one run held 324 MB on an hour's source,
 * four runs of four held 122 MB each, and took no longer (2.4 s in all against 2.7 s).
 */
export const MOSAIC_TILES_PER_RUN = 4;

/** A mosaic by seeks: ffmpeg runs, each writing its tiles (scaled, as PNGs) to `tiles`; the caller lays them out. */
export interface MosaicTileRuns {
  runs: PreviewRecipe[];
  /** One file per tile, in the sheet's order (left to right, top to bottom); a tile without a frame has none. */
  tiles: string[];
  /** How the tiles lie: tileWidth is the sheet's width over the columns, rounded up (the laid-out sheet is scaled to its width). */
  sheet: { columns: number; rows: number; tileWidth: number; width: number };
}

/**
 * One fast-seeked input per tile (decoding only from the keyframe before each, on one thread), the
 * first frame of each as its own output, MOSAIC_TILES_PER_RUN inputs per run.
 */
export function mosaicTileRuns(input: InputOf, p: { times: number[]; columns: number; rows: number; width: number }, dir: string): MosaicTileRuns {
  const tileWidth = Math.ceil(p.width / p.columns);
  const tiles = p.times.map((_, i) => `${dir}/tile-${String(i).padStart(2, '0')}.png`);
  const runs: PreviewRecipe[] = [];
  for (let first = 0; first < p.times.length; first += MOSAIC_TILES_PER_RUN) {
    const times = p.times.slice(first, first + MOSAIC_TILES_PER_RUN);
    const inputs = times.flatMap((t) => input(['-threads', '1', '-ss', t.toFixed(3)]));
    const graph = times.map((_, i) => `[${i}:v:0]trim=end_frame=1,setpts=PTS-STARTPTS,${displayScale(tileWidth)}[f${i}]`).join(';');
    const outputs = times.flatMap((_, i) => ['-map', `[f${i}]`, '-frames:v', '1', '-update', '1', '-f', 'image2', '-c:v', 'png', '-y', tiles[first + i]!]);
    runs.push({ args: [...inputs, '-filter_complex', graph, ...outputs], covers: 1 });
  }
  return { runs, tiles, sheet: { columns: p.columns, rows: p.rows, tileWidth, width: p.width } };
}

/**
 * Mosaic frame times: the middle of each of n equal parts of the video stream, never past its last
 * frame, so every tile shows a real frame (sampling with fps= after a seek could come up one short,
 * leaving the last tile black).
 */
export function mosaicTimes(video: { duration?: string | number; avg_frame_rate?: string }, duration: number, n: number): number[] {
  const length = Number(video.duration) > 0 ? Math.min(Number(video.duration), duration) : duration;
  const frame = frameSeconds(video);
  const last = Math.max(0, length - 1.5 * frame);
  return Array.from({ length: n }, (_, i) => Math.min((length * (i + 0.5)) / n, last));
}

/** One frame's duration from the stream's average rate (25 fps when it has none). */
function frameSeconds(video: { avg_frame_rate?: string }): number {
  const [num, den] = (video.avg_frame_rate ?? '25/1').split('/').map(Number);
  return num && den ? den / num : 0.04;
}

export function clipRecipe(input: InputOf, p: { start: number; length: number; width: number; hasAudio: boolean }, out: string): PreviewRecipe {
  const even = p.width - (p.width % 2); // H.264 in 4:2:0 needs even dimensions
  const audio = p.hasAudio ? ['-map', '0:a:0'] : [];
  const encode = ['-vf', displayScale(even, { even: true }), ...h264(23), ...(p.hasAudio ? ['-c:a', 'aac', '-b:a', '128k'] : [])];
  return { args: [...input(['-ss', p.start.toFixed(3)]), '-t', p.length.toFixed(3), '-map', '0:v:0', ...audio, ...encode, '-movflags', '+faststart', '-y', out], covers: p.length };
}

/** A storyboard's tiles: how many, how far apart, how they are laid out, and whether only keyframes are decoded. */
export interface StoryboardPlan {
  interval: number;
  count: number;
  columns: number;
  rows: number;
  /** Width of one tile. */
  width: number;
  keyframes: boolean;
}

/** About 150 tiles: one a second up to 150 s, then duration ÷ 150 (whole seconds). */
export function storyboardInterval(duration: number): number {
  return Math.max(1, Math.round(duration / 150));
}

/**
 * Past this many pixel-seconds (5 minutes of 720p) a storyboard decodes only keyframes: a full decode
 * of 60 s of 720p took 6.8 s on the bench machine against 0.6 s for its keyframes, and a tile of a long
 * source (an interval of 2 s or more) is as useful from the keyframe just before its time.
 */
const EVERY_FRAME_MAX_PIXEL_SECONDS = 300 * 1280 * 720;

export function storyboardPlan(video: { width?: number; height?: number }, duration: number, p: { interval: number | null; columns: number; width: number }): StoryboardPlan {
  const interval = p.interval ?? storyboardInterval(duration);
  const count = Math.max(1, Math.ceil(duration / interval - 1e-9));
  const columns = Math.min(p.columns, count);
  const pixels = (video.width ?? 1280) * (video.height ?? 720);
  return { interval, count, columns, rows: Math.ceil(count / columns), width: p.width, keyframes: duration * pixels > EVERY_FRAME_MAX_PIXEL_SECONDS };
}

/**
 * One pass over the video: a frame every interval from 0 (fps picks the nearest), the last frame held
 * one interval past the end so the last tile has one, cut to the plan's count, scaled, tiled into one JPEG.
 */
export function storyboardRecipe(input: InputOf, p: StoryboardPlan, duration: number, out: string): PreviewRecipe {
  const rate = `1/${p.interval}`;
  const graph = `[0:v:0]setpts=PTS-STARTPTS,tpad=stop_mode=clone:stop_duration=${p.interval},fps=${rate},trim=end_frame=${p.count},${displayScale(p.width, { even: true })},tile=${p.columns}x${p.rows}:color=black`;
  return { args: [...input(p.keyframes ? ['-skip_frame', 'nokey'] : []), '-filter_complex', graph, '-frames:v', '1', '-q:v', '4', '-f', 'image2', '-c:v', 'mjpeg', '-y', out], covers: duration };
}

/** A storyboard's WebVTT (cues back to back from 0 to the duration, each naming its tile of the sprite) and Mux's JSON. */
export function storyboardFiles(p: StoryboardPlan, duration: number, tile: { width: number; height: number }, sprite: string): { vtt: string; json: string } {
  const tiles = Array.from({ length: p.count }, (_, i) => ({ start: roundMs(i * p.interval), end: roundMs(Math.min((i + 1) * p.interval, duration)), x: (i % p.columns) * tile.width, y: Math.floor(i / p.columns) * tile.height }));
  const vtt = `WEBVTT\n\n${tiles.map((t) => `${formatTimestamp(t.start)} --> ${formatTimestamp(t.end)}\n${sprite}#xywh=${t.x},${t.y},${tile.width},${tile.height}\n`).join('\n')}`;
  const json = JSON.stringify({ url: sprite, tile_width: tile.width, tile_height: tile.height, duration, tiles: tiles.map((t) => ({ start: t.start, x: t.x, y: t.y })) }, null, 2);
  return { vtt, json };
}

const roundMs = (s: number): number => Math.round(s * 1000) / 1000;
