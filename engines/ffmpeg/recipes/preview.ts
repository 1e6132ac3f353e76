// ffmpeg recipes of the four previews. Pure: the plan (times already checked against the source) and
// how to open the source (`input`, which puts seek options before `-i`) in, the argument list out.
import { h264 } from './codecs';

/** Opens the source with the given options before `-i` (a file, or a URL read through the egress proxy). */
export type InputOf = (before: string[]) => string[];

export interface PreviewRecipe {
  args: string[];
  /** Seconds of media the run covers, for progress. */
  covers: number;
}

export function gifRecipe(input: InputOf, p: { start: number; length: number; fps: number; width: number }, out: string): PreviewRecipe {
  const graph = `[0:v:0]fps=${p.fps},scale=${p.width}:-1:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[pal];[b][pal]paletteuse=dither=bayer:bayer_scale=5`;
  return { args: [...input(['-ss', p.start.toFixed(3), '-t', p.length.toFixed(3)]), '-filter_complex', graph, '-loop', '0', '-y', out], covers: p.length };
}

const JPEG = ['-q:v', '2', '-update', '1', '-f', 'image2', '-c:v', 'mjpeg'];

export function thumbnailRecipe(input: InputOf, p: { at: number; width: number }, out: string): PreviewRecipe {
  return { args: [...input(['-ss', p.at.toFixed(3)]), '-map', '0:v:0', '-frames:v', '1', '-vf', `scale=${p.width}:-1:flags=lanczos`, ...JPEG, '-y', out], covers: 1 };
}

/** One fast-seeked input per tile (decoding only from the keyframe before each), the first frame of each, tiled. */
export function mosaicRecipe(input: InputOf, p: { times: number[]; columns: number; rows: number; width: number }, out: string): PreviewRecipe {
  const tile = Math.ceil(p.width / p.columns);
  const inputs = p.times.flatMap((t) => input(['-ss', t.toFixed(3)]));
  const frames = p.times.map((_, i) => `[${i}:v:0]trim=end_frame=1,setpts=PTS-STARTPTS,scale=${tile}:-1:flags=lanczos,setsar=1[f${i}]`);
  const graph = `${frames.join(';')};${p.times.map((_, i) => `[f${i}]`).join('')}concat=n=${p.times.length}:v=1:a=0,tile=${p.columns}x${p.rows},scale=${p.width}:-1:flags=lanczos`;
  return { args: [...inputs, '-filter_complex', graph, '-frames:v', '1', ...JPEG, '-y', out], covers: 1 };
}

/**
 * Mosaic frame times: the middle of each of n equal parts of the video stream, never past its last
 * frame, so every tile shows a real frame (sampling with fps= after a seek could come up one short,
 * leaving the last tile black).
 */
export function mosaicTimes(video: { duration?: string | number; avg_frame_rate?: string }, duration: number, n: number): number[] {
  const length = Number(video.duration) > 0 ? Math.min(Number(video.duration), duration) : duration;
  const [num, den] = (video.avg_frame_rate ?? '25/1').split('/').map(Number);
  const frame = num && den ? den / num : 0.04;
  const last = Math.max(0, length - 1.5 * frame);
  return Array.from({ length: n }, (_, i) => Math.min((length * (i + 0.5)) / n, last));
}

export function clipRecipe(input: InputOf, p: { start: number; length: number; width: number; hasAudio: boolean }, out: string): PreviewRecipe {
  const even = p.width - (p.width % 2); // H.264 in 4:2:0 needs even dimensions
  const audio = p.hasAudio ? ['-map', '0:a:0'] : [];
  const encode = ['-vf', `scale=${even}:-2:flags=lanczos`, ...h264(23), ...(p.hasAudio ? ['-c:a', 'aac', '-b:a', '128k'] : [])];
  return { args: [...input(['-ss', p.start.toFixed(3), '-t', p.length.toFixed(3)]), '-map', '0:v:0', ...audio, ...encode, '-movflags', '+faststart', '-y', out], covers: p.length };
}
