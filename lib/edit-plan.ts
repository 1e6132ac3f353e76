import { isAudioOutput } from './download-plan';
import type { DownloadFormat, Quality } from './operations';

/** Processing options of a download, in the order they are applied (normalize last, so its target holds). */
export const PROCESSING_ORDER = ['denoise', 'trim_silence', 'normalize'] as const;
export type ProcessingOption = (typeof PROCESSING_ORDER)[number];

/** Target of `normalize`: integrated loudness (LUFS) and maximum true peak (dBTP). */
export const LOUDNESS_TARGET = { integrated: -16, truePeak: -1.5 } as const;

export interface EditStep {
  ext: string;
  /** Output options (stream maps and codecs); audio filters are added by the caller. */
  outputOptions: string[];
}

const MP4_VIDEO = ['h264', 'hevc', 'av1', 'mpeg4'];
const WEBM_VIDEO = ['vp8', 'vp9', 'av1'];
const AUDIO_CODEC: Record<string, { ext: string; options: string[] }> = {
  aac: { ext: 'm4a', options: ['-c:a', 'aac', '-b:a', '192k'] },
  mp3: { ext: 'mp3', options: ['-c:a', 'libmp3lame', '-q:a', '2'] },
  opus: { ext: 'opus', options: ['-c:a', 'libopus', '-b:a', '128k'] },
  vorbis: { ext: 'ogg', options: ['-c:a', 'libvorbis', '-q:a', '6'] },
  flac: { ext: 'flac', options: ['-c:a', 'flac'] },
};
const H264 = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p'];
const VP9 = ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-b:v', '0', '-crf', '30'];

/**
 * How to write a clipped and/or audio-processed download. Audio is always re-encoded (filters and
 * sample-accurate cuts need it). Video is re-encoded when it is cut, so the cut is frame-accurate
 * and never snaps to a keyframe, and copied otherwise when the container allows the codec.
 */
export function editStep(
  quality: Quality,
  format: DownloadFormat | null,
  codecs: { vcodec: string | null; acodec: string | null },
  sourceExt: string,
  cut: boolean,
): EditStep {
  const { vcodec, acodec } = codecs;
  if (format === 'mp3') return { ext: 'mp3', outputOptions: ['-vn', '-sn', '-map', '0:a:0', ...AUDIO_CODEC.mp3!.options] };
  if (format === 'wav') return { ext: 'wav', outputOptions: ['-vn', '-sn', '-map', '0:a:0', '-c:a', 'pcm_s16le'] };
  if (isAudioOutput(quality, format) || vcodec === null) {
    const a = format === 'webm' ? AUDIO_CODEC.opus! : format ? AUDIO_CODEC.aac! : (acodec && AUDIO_CODEC[acodec]) || AUDIO_CODEC.aac!;
    return { ext: format ?? a.ext, outputOptions: ['-vn', '-sn', '-map', '0:a:0?', ...a.options] };
  }
  const ext = format ?? (['mp4', 'webm', 'mkv'].includes(sourceExt) ? sourceExt : 'mkv');
  const maps = ['-map', '0:v:0', '-map', '0:a:0?', '-sn'];
  if (ext === 'webm') {
    const v = !cut && WEBM_VIDEO.includes(vcodec) ? ['-c:v', 'copy'] : VP9;
    return { ext, outputOptions: [...maps, ...v, '-c:a', 'libopus', '-b:a', '128k'] };
  }
  const v = !cut && (ext === 'mkv' || MP4_VIDEO.includes(vcodec)) ? ['-c:v', 'copy'] : H264;
  return { ext, outputOptions: [...maps, ...v, '-c:a', 'aac', '-b:a', '192k', ...(ext === 'mp4' ? ['-movflags', '+faststart'] : [])] };
}

/** Sorts the requested options into the order they are applied; drops duplicates. */
export function processingSteps(processing: readonly string[] | null): ProcessingOption[] {
  const want = new Set(processing ?? []);
  return PROCESSING_ORDER.filter((p) => want.has(p));
}

/** Why a clip range does not fit a source of `duration` seconds, or null when it does. */
export function clipProblem(clipStart: number | null, clipEnd: number | null, duration: number): string | null {
  const secs = (n: number) => `${Math.round(n * 1000) / 1000} s`;
  if (clipStart !== null && clipStart >= duration) return `clip_start (${secs(clipStart)}) is past the end of the source, which is ${secs(duration)} long`;
  // a little slack: container and stream durations differ by a frame or so
  if (clipEnd !== null && clipEnd > duration + 0.05) return `clip_end (${secs(clipEnd)}) is past the end of the source, which is ${secs(duration)} long`;
  return null;
}
