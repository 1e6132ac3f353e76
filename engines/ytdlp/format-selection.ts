// yt-dlp's format selector and sort order for a download request: pure, so it is tested in milliseconds.
import { isAudioOutput } from '../../lib/download-plan';
import type { DownloadFormat, Quality } from '../../lib/media-vocabulary';

const HEIGHT: Record<Exclude<Quality, 'best' | 'audio'>, number> = { '1080p': 1080, '720p': 720, '480p': 480 };

export function ytdlpSelection(quality: Quality, format: DownloadFormat | null): { format: string; sort?: string } {
  if (quality === 'audio' || isAudioOutput(quality, format)) return { format: 'ba/b', sort: format === 'mp3' ? 'acodec:mp3' : undefined };
  // Prefer streams already in the target container so the final step can remux instead of re-encode.
  const sort = format === 'mp4' ? 'ext:mp4:m4a' : format === 'webm' ? 'ext:webm' : undefined;
  if (quality === 'best') return { format: 'bv*+ba/b', sort };
  const h = HEIGHT[quality];
  // Fall back to the smallest rendition when none is at or below the requested height.
  return { format: `bv*[height<=${h}]+ba/b[height<=${h}]/wv*+ba/w`, sort };
}
