import type { FormatInfo, VideoInfo } from '../../lib/video-info';
import type { YtDlpInfo } from './ytdlp.engine';
import { chaptersOf } from '../../lib/chapters';

const intOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : null);
const numOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const codec = (v: string | null | undefined): string | null => (!v || v === 'none' ? null : v);

function isoDate(info: YtDlpInfo): string | null {
  const d = info.upload_date;
  if (d && /^\d{8}$/.test(d)) return `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}`;
  const ts = info.timestamp ?? info.release_timestamp;
  return typeof ts === 'number' ? new Date(ts * 1000).toISOString().slice(0, 10) : null;
}

/** Maps yt-dlp's info dict to the Video info object of the contract. */
export function toVideoInfo(url: string, info: YtDlpInfo): VideoInfo {
  // A single-format result keeps its dimensions and codecs at the top level of the info dict.
  const single = info.formats?.length === 1;
  const formats: FormatInfo[] = (info.formats ?? [])
    .map((f) => (single ? { ...f, width: f.width ?? info.width, height: f.height ?? info.height, fps: f.fps ?? info.fps, vcodec: f.vcodec ?? info.vcodec, acodec: f.acodec ?? info.acodec, filesize: f.filesize ?? info.filesize } : f))
    .filter((f) => f.ext !== 'mhtml')
    .map((f) => {
      const vcodec = codec(f.vcodec);
      const acodec = codec(f.acodec);
      const height = intOrNull(f.height);
      const audioOnly = f.vcodec === 'none' || (f.video_ext === 'none' && !height);
      return {
        format_id: String(f.format_id),
        ext: f.ext ?? 'unknown',
        quality: height ? `${height}p` : audioOnly ? 'audio' : (f.format_note ?? null),
        width: intOrNull(f.width),
        height,
        fps: numOrNull(f.fps),
        filesize: intOrNull(f.filesize ?? f.filesize_approx),
        vcodec: audioOnly ? null : vcodec,
        acodec,
        audio_only: audioOnly,
      };
    });
  return {
    url,
    title: info.title ?? info.fulltitle ?? info.id,
    description: info.description ?? null,
    duration: numOrNull(info.duration),
    thumbnail: info.thumbnail ?? info.thumbnails?.at(-1)?.url ?? null,
    upload_date: isoDate(info),
    view_count: intOrNull(info.view_count),
    like_count: intOrNull(info.like_count),
    channel: info.channel ?? info.uploader ?? null,
    channel_url: info.channel_url ?? info.uploader_url ?? null,
    tags: info.tags ?? [],
    categories: info.categories ?? [],
    subtitles: Object.keys(info.subtitles ?? {}),
    chapters: chaptersOf(info.chapters, numOrNull(info.duration)),
    formats,
  };
}
