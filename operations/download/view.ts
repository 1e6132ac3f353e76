import { EXPIRED, str, type JobOutputView, type OutputContext } from '../output-view';

const AUDIO_FORMATS = new Set(['mp3', 'wav', 'm4a', 'opus', 'ogg', 'flac', 'aac']);

/** The downloaded file, played in place: audio or video by its format. */
export function showDownload({ result, downloadUrl }: OutputContext): JobOutputView {
  if (!downloadUrl) return EXPIRED;
  return AUDIO_FORMATS.has(str(result.format) ?? '') ? { kind: 'audio', url: downloadUrl } : { kind: 'video', url: downloadUrl, width: null, height: null };
}
