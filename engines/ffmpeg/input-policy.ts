// What ffmpeg may read. Inputs are local media files, or an http(s) URL through the egress proxy;
// never another protocol (file: from a playlist, concat:, subfile:, rtmp:…). Demuxers are limited
// to media containers, so a "video" that is really an HLS/DASH playlist or a concat list (which
// would open further files and URLs) is refused rather than followed.
import path from 'node:path';
import { DEFAULT_MAX_SOURCE_PIXELS, projectRoot } from '../../lib/config';

export const INPUT_FORMATS = [
  'mov', 'matroska', 'mpegts', 'flv', 'ogg', 'wav', 'w64', 'mp3', 'aac', 'ac3', 'eac3', 'flac', 'aiff', 'caf', 'avi', 'asf', 'mpeg',
  'mpegvideo', 'm4v', 'h264', 'hevc', 'amr', 'au', 'wv', 'ape', 'tta', 'mxf', 'nut', 'rm', 'dv', 'ivf', 'gif', 'png_pipe', 'jpeg_pipe', 'webp_pipe',
  // stills (thumbnails, mosaics, frames): image2 expands patterns only from the file name, and every
  // name the service opens is its own (job id + fixed name)
  'image2',
  // chapters written by the service (and by yt-dlp's --embed-chapters) as ffmpeg's metadata file, and
  // the SubRip tracks it writes for downloads: text holding no references
  'ffmetadata',
  'srt',
].join(',');

// A URL is never read as a still image (image demuxers decode whatever size the file declares), nor as the service's own metadata.
const URL_INPUT_FORMATS = INPUT_FORMATS.split(',').filter((f) => !['png_pipe', 'jpeg_pipe', 'webp_pipe', 'image2', 'ffmetadata', 'srt'].includes(f)).join(',');

const LOCAL_PROTOCOLS = 'file,pipe';
const PROXIED_PROTOCOLS = 'http,https,tcp,tls,httpproxy';

/** Input options for one input: local files only, or a URL through the egress proxy; pictures within the pixel budget. */
export function inputGuard(input: string, proxyUrl: string | undefined, maxPixels = DEFAULT_MAX_SOURCE_PIXELS): string[] {
  const budget = ['-max_pixels', String(maxPixels)];
  if (/^https?:\/\//i.test(input)) {
    if (!proxyUrl) throw new Error('a URL input needs the egress proxy');
    return ['-protocol_whitelist', PROXIED_PROTOCOLS, '-http_proxy', proxyUrl, '-format_whitelist', URL_INPUT_FORMATS, ...budget];
  }
  return ['-protocol_whitelist', LOCAL_PROTOCOLS, '-format_whitelist', INPUT_FORMATS, ...budget];
}

/** The guard for a local file as libav's own input options (for a process that opens it with libav itself, as the speech runner does). */
export function localLibavOptions(): Record<string, string> {
  return { protocol_whitelist: 'file', format_whitelist: INPUT_FORMATS };
}

/**
 * ffmpeg input options sending a platform's request headers (yt-dlp's http_headers) with an http(s)
 * input. A header that could split the request (CR/LF) is dropped rather than passed on.
 */
export function httpHeaderOptions(headers: Record<string, string> | undefined): string[] {
  const safe = Object.entries(headers ?? {}).filter(([k, v]) => /^[A-Za-z0-9-]+$/.test(k) && !/[\r\n]/.test(String(v)));
  const agent = safe.find(([k]) => k.toLowerCase() === 'user-agent');
  const rest = safe.filter(([k]) => k.toLowerCase() !== 'user-agent');
  return [...(agent ? ['-user_agent', String(agent[1])] : []), ...(rest.length ? ['-headers', rest.map(([k, v]) => `${k}: ${String(v)}\r\n`).join('')] : [])];
}

/** The arguments with each `-i X` preceded by the guard for X. */
export function guardInputs(args: string[], proxyUrl?: string, maxPixels?: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-i' && i + 1 < args.length) out.push(...inputGuard(args[i + 1]!, proxyUrl, maxPixels));
    out.push(args[i]!);
  }
  return out;
}

/** The folder of ffmpeg/ffprobe wrappers that apply the same guard; yt-dlp runs them (--ffmpeg-location). */
export const SANDBOX_BIN_DIR = path.join(projectRoot, 'engines', 'ffmpeg', 'sandbox');

/** Environment the wrappers read: the real binaries and the allowed formats. */
export function sandboxEnv(ffmpegPath: string, ffprobePath: string, maxPixels = DEFAULT_MAX_SOURCE_PIXELS): NodeJS.ProcessEnv {
  return { MEDIASVC_REAL_FFMPEG: ffmpegPath, MEDIASVC_REAL_FFPROBE: ffprobePath, MEDIASVC_INPUT_FORMATS: INPUT_FORMATS, MEDIASVC_MAX_PIXELS: String(maxPixels) };
}
