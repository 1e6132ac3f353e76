import type { DownloadFormat, Quality } from './operations';

const HEIGHT: Record<Exclude<Quality, 'best' | 'audio'>, number> = { '1080p': 1080, '720p': 720, '480p': 480 };
const AUDIO_FORMATS: DownloadFormat[] = ['mp3', 'wav'];

export function isAudioOutput(quality: Quality, format: DownloadFormat | null): boolean {
  return quality === 'audio' || (format !== null && AUDIO_FORMATS.includes(format));
}

/** yt-dlp format selector and sort order for a quality/format request. */
export function ytdlpSelection(quality: Quality, format: DownloadFormat | null): { format: string; sort?: string } {
  if (quality === 'audio' || isAudioOutput(quality, format)) return { format: 'ba/b', sort: format === 'mp3' ? 'acodec:mp3' : undefined };
  // Prefer streams already in the target container so the final step can remux instead of re-encode.
  const sort = format === 'mp4' ? 'ext:mp4:m4a' : format === 'webm' ? 'ext:webm' : undefined;
  if (quality === 'best') return { format: 'bv*+ba/b', sort };
  const h = HEIGHT[quality];
  // Fall back to the smallest rendition when none is at or below the requested height.
  return { format: `bv*[height<=${h}]+ba/b[height<=${h}]/wv*+ba/w`, sort };
}

export interface FinalStep {
  ext: string;
  /** ffmpeg output options; empty when the downloaded file is already final. */
  outputOptions: string[] | null;
}

const MP4_VIDEO = ['h264', 'hevc', 'av1', 'mpeg4'];
const MP4_AUDIO = ['aac', 'mp3', 'alac'];
const WEBM_VIDEO = ['vp8', 'vp9', 'av1'];
const WEBM_AUDIO = ['opus', 'vorbis'];
const AUDIO_EXT: Record<string, string> = { aac: 'm4a', mp3: 'mp3', opus: 'opus', vorbis: 'ogg', flac: 'flac' };

/** How to turn the downloaded file (with the given codecs) into the requested output. */
export function finalStep(quality: Quality, format: DownloadFormat | null, codecs: { vcodec: string | null; acodec: string | null }, sourceExt: string): FinalStep {
  const { vcodec, acodec } = codecs;
  if (format === 'mp3') {
    return { ext: 'mp3', outputOptions: vcodec === null && acodec === 'mp3' ? ['-vn', '-c:a', 'copy'] : ['-vn', '-c:a', 'libmp3lame', '-q:a', '2'] };
  }
  if (format === 'wav') return { ext: 'wav', outputOptions: ['-vn', '-c:a', 'pcm_s16le'] };
  if (quality === 'audio') {
    const ext = acodec ? AUDIO_EXT[acodec] : undefined;
    if (ext) return { ext, outputOptions: ['-vn', '-c:a', 'copy'] };
    return { ext: 'm4a', outputOptions: ['-vn', '-c:a', 'aac', '-b:a', '192k'] };
  }
  if (format === 'mp4') {
    const v = vcodec === null || MP4_VIDEO.includes(vcodec) ? ['-c:v', 'copy'] : ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '22', '-pix_fmt', 'yuv420p'];
    const a = acodec === null || MP4_AUDIO.includes(acodec) ? ['-c:a', 'copy'] : ['-c:a', 'aac', '-b:a', '160k'];
    return { ext: 'mp4', outputOptions: ['-map', '0', ...v, ...a, '-movflags', '+faststart'] };
  }
  if (format === 'webm') {
    const v = vcodec === null || WEBM_VIDEO.includes(vcodec) ? ['-c:v', 'copy'] : ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-b:v', '0', '-crf', '33'];
    const a = acodec === null || WEBM_AUDIO.includes(acodec) ? ['-c:a', 'copy'] : ['-c:a', 'libopus', '-b:a', '128k'];
    return { ext: 'webm', outputOptions: ['-map', '0', ...v, ...a] };
  }
  if (format === 'mkv') return { ext: 'mkv', outputOptions: ['-map', '0', '-c', 'copy'] };
  return { ext: sourceExt, outputOptions: null };
}
