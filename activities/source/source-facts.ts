// What the source steps decide without I/O: a direct link's yt-dlp-like info, the rendition ffmpeg
// can seek in, the limits a source must keep, and yt-dlp's failures said in the job's terms.
import path from 'node:path';
import type { DirectMedia } from '../../engines/direct-media';
import type { YtDlpFormat, YtDlpInfo } from '../../engines/ytdlp/ytdlp.engine';
import { YtDlpError } from '../../engines/ytdlp/ytdlp.engine';
import { JobFailure } from '../../lib/job-failure';
import type { SourceSummary } from '../../lib/job-reports';
import { formatSeconds, tooLargeMessage, tooLongMessage, type SourceLimits } from '../../lib/plans';
import { classifiedFailure } from '../step/failures';

/** The limits every job's source must keep (live, duration, size); its title and duration. */
export function withinLimits(config: { allowLive: boolean }, info: YtDlpInfo, limits: SourceLimits): SourceSummary {
  if (!config.allowLive && (info.is_live || info.live_status === 'is_live' || info.live_status === 'is_upcoming')) {
    throw JobFailure.user('rejected', 'The source is a live stream; live streams are not supported');
  }
  if (typeof info.duration === 'number' && info.duration > limits.maxSeconds) throw overLimit(tooLongMessage(limits, info.duration));
  const size = info.filesize ?? info.filesize_approx;
  if (typeof size === 'number' && size > limits.maxBytes) throw overLimit(tooLargeMessage(limits, size));
  return { title: info.title ?? info.id, duration: typeof info.duration === 'number' ? info.duration : null };
}

export function toFailure(err: unknown, limits?: SourceLimits): unknown {
  if (!(err instanceof YtDlpError)) return err;
  // yt-dlp's own limit checks, said with the limit and who sets it
  if (limits && err.limit === 'size') return overLimit(tooLargeMessage(limits));
  if (limits && err.limit === 'filter') {
    return overLimit(`The source is outside the limits: a live stream, or longer than ${formatSeconds(limits.maxSeconds)}, the limit of ${limits.secondsSetBy}`);
  }
  return classifiedFailure(err.kind === 'filtered' ? 'rejected' : err.kind, err.message, 'ytdlp');
}

/** A source past one of its limits: the job fails at once (another try would fetch the same bytes), refunded. */
export function overLimit(message: string): JobFailure {
  return JobFailure.user('rejected', message);
}

export function fileNameOf(url: string): string {
  return decodeURIComponent(path.posix.basename(new URL(url).pathname)) || 'media';
}

/** What yt-dlp's generic extractor says of a direct media link (id and title from the file name, the MIME subtype as format, Last-Modified as timestamp). */
export function directFileInfo(url: string, media: DirectMedia): YtDlpInfo {
  const title = directTitle(url);
  const [type = '', subtype = ''] = media.contentType.toLowerCase().split(';')[0]!.trim().split('/');
  // yt-dlp's determine_ext: whatever follows the URL's last dot before the query, when alphanumeric
  const guess = url.split('?')[0]!.split('.').pop() ?? '';
  const ext = /^[A-Za-z0-9]+$/.test(guess) ? guess : type === 'audio' && subtype === 'mp4' ? 'm4a' : (MIME_EXT[subtype] ?? subtype);
  const modified = media.lastModified ? Date.parse(media.lastModified) : NaN;
  // yt-dlp prefixes an id that reads as another format's extension ("fmp4" for audio/mp4 saved as .m4a)
  const formatId = subtype !== ext && SELECTION_EXTS.has(subtype) ? `f${subtype}` : subtype;
  return {
    id: title,
    title,
    direct: true,
    url,
    extractor_key: 'Generic',
    timestamp: Number.isFinite(modified) ? Math.floor(modified / 1000) : null,
    subtitles: {},
    formats: [{ format_id: formatId, url, ext, protocol: new URL(url).protocol.slice(0, -1), ...(type === 'audio' ? { vcodec: 'none' } : {}) }],
  };
}

// yt-dlp's format-selection extensions (MEDIA_EXTENSIONS common audio and video, 3gp, mhtml)
const SELECTION_EXTS = new Set(['3gp', 'aiff', 'alac', 'avi', 'flac', 'flv', 'm4a', 'mhtml', 'mka', 'mkv', 'mov', 'mp3', 'mp4', 'ogg', 'opus', 'wav', 'webm']);

// MIME subtypes whose file extension differs (yt-dlp's mimetype2ext, for the media types a direct link has)
const MIME_EXT: Record<string, string> = { mpeg: 'mp3', 'x-matroska': 'mkv', quicktime: 'mov', 'x-flv': 'flv', 'x-msvideo': 'avi', 'x-wav': 'wav', wave: 'wav', 'x-m4a': 'm4a', 'x-ms-wmv': 'wmv', '3gpp': '3gp' };

/** A plain file's title: its name without the extension. */
export function directTitle(url: string): string {
  const name = fileNameOf(url);
  return name.replace(/\.[^.]+$/, '') || name;
}

// yt-dlp's extractors for media named by an ordinary page (Open Graph, JSON-LD, <video> elements)
export const PAGE_EXTRACTORS = new Set(['Generic', 'HTML5MediaEmbed']);

// The first read of a source's index: a short video's whole index when it is at the front.
export const INDEX_CHUNK_BYTES = 256 * 1024;

// Containers ffmpeg seeks in over HTTP with range requests, all on the input policy's format list.
const SEEKABLE_EXT = new Set(['mp4', 'm4v', 'mov', 'webm', 'mkv']);

/**
 * The selected rendition as one progressive http(s) file ffmpeg can seek in, or null (HLS/DASH,
 * or a video+audio merge when the job needs both): those are downloaded instead.
 */
export function seekableFormat(info: YtDlpInfo, reads: 'video' | 'av'): { url: string; headers: Record<string, string> } | null {
  const chosen: YtDlpFormat[] = info.requested_formats?.length ? info.requested_formats : [{ ...info, format_id: info.format_id ?? info.id }];
  const hasVideo = (f: YtDlpFormat) => f.vcodec !== 'none';
  const candidate = chosen.length === 1 ? chosen[0] : reads === 'video' ? chosen.find((f) => hasVideo(f) && f.vcodec) : undefined;
  if (!candidate?.url || !hasVideo(candidate)) return null;
  if (!/^https?$/.test(candidate.protocol ?? '') || !/^https?:\/\//i.test(candidate.url) || !SEEKABLE_EXT.has(candidate.ext ?? '')) return null;
  return { url: candidate.url, headers: candidate.http_headers ?? {} };
}

/** Where a job's fetched file goes in its work folder: download/, or download/<slot>/ for a further file of the job. */
export function downloadFolder(workDir: string, slot?: string): string {
  if (slot !== undefined && !/^[a-z0-9-]{1,40}$/.test(slot)) throw new Error(`unsafe download slot ${slot}`);
  return slot ? path.join(workDir, 'download', slot) : path.join(workDir, 'download');
}
