// Codec tables shared by the download recipes: which codecs a container takes as they are, and how
// each kind of output is encoded when they must change.
import { DISPLAY_EVEN } from '../display';

export const MP4_VIDEO = ['h264', 'hevc', 'av1', 'mpeg4'];
export const MP4_AUDIO = ['aac', 'mp3', 'alac'];
export const WEBM_VIDEO = ['vp8', 'vp9', 'av1'];
export const WEBM_AUDIO = ['opus', 'vorbis'];

/** An audio codec's file extension and encoder options (the extension an audio-only output gets). */
export const AUDIO_CODEC: Record<string, { ext: string; options: string[] }> = {
  aac: { ext: 'm4a', options: ['-c:a', 'aac', '-b:a', '192k'] },
  mp3: { ext: 'mp3', options: ['-c:a', 'libmp3lame', '-q:a', '2'] },
  opus: { ext: 'opus', options: ['-c:a', 'libopus', '-b:a', '128k'] },
  vorbis: { ext: 'ogg', options: ['-c:a', 'libvorbis', '-q:a', '6'] },
  flac: { ext: 'flac', options: ['-c:a', 'flac'] },
};

/** H.264 in 8-bit 4:2:0 (what every browser plays) at a constant quality `crf`; the picture must have even sides (DISPLAY_EVEN). */
export function h264(crf: number): string[] {
  return ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(crf), '-pix_fmt', 'yuv420p'];
}

/** VP9 in 8-bit 4:2:0 (profile 0, what every browser plays) at realtime speed and a constant quality `crf`. */
export function vp9(crf: number): string[] {
  return ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-b:v', '0', '-crf', String(crf), '-pix_fmt', 'yuv420p'];
}

/**
 * A re-encode of the source's picture as a player shows it (rotation applied by ffmpeg, square
 * pixels, even sides), whatever it was stored as: odd sizes, 4:4:4, 4:2:2 or 10-bit all convert.
 */
export function displayEncode(codec: string[]): string[] {
  return ['-vf', DISPLAY_EVEN, ...codec];
}

export const COPY_VIDEO = ['-c:v', 'copy'];
export const COPY_AUDIO = ['-c:a', 'copy'];
