import fs from 'node:fs/promises';
import path from 'node:path';
import { runProcess } from '../child-process';

/** The subset of yt-dlp's info dict this service reads. */
export interface YtDlpFormat {
  format_id: string;
  url?: string;
  ext?: string;
  format_note?: string;
  resolution?: string;
  width?: number | null;
  height?: number | null;
  fps?: number | null;
  filesize?: number | null;
  filesize_approx?: number | null;
  vcodec?: string | null;
  acodec?: string | null;
  video_ext?: string;
  audio_ext?: string;
}

export interface YtDlpInfo {
  id: string;
  title?: string;
  fulltitle?: string;
  description?: string | null;
  duration?: number | null;
  thumbnail?: string | null;
  thumbnails?: { url: string }[];
  upload_date?: string | null;
  timestamp?: number | null;
  release_timestamp?: number | null;
  view_count?: number | null;
  like_count?: number | null;
  channel?: string | null;
  uploader?: string | null;
  channel_url?: string | null;
  uploader_url?: string | null;
  tags?: string[] | null;
  categories?: string[] | null;
  subtitles?: Record<string, unknown> | null;
  formats?: YtDlpFormat[];
  is_live?: boolean | null;
  live_status?: string | null;
  filesize?: number | null;
  filesize_approx?: number | null;
  webpage_url?: string;
  extractor?: string;
  /** True when the URL is the media file itself. */
  direct?: boolean;
  url?: string;
  ext?: string;
  width?: number | null;
  height?: number | null;
  fps?: number | null;
  vcodec?: string | null;
  acodec?: string | null;
  _type?: string;
}

export type YtDlpErrorKind = 'unsupported' | 'unavailable' | 'filtered' | 'failed';

/** A yt-dlp failure, classified so callers can tell user errors from transient ones. */
export class YtDlpError extends Error {
  constructor(
    readonly kind: YtDlpErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'YtDlpError';
  }
}

export interface DownloadProgress {
  downloadedBytes: number;
  totalBytes: number | null;
  /** 0..1 when known. */
  fraction: number | null;
}

export interface DownloadRequest {
  url: string;
  outDir: string;
  /** yt-dlp -f selector. */
  format: string;
  /** yt-dlp -S sort fields. */
  sort?: string;
  mergeOutputFormat?: string;
  maxFilesize?: number;
  /** yt-dlp --match-filter; a source that does not pass is skipped (no file). */
  matchFilter?: string;
  /** Also write `source.info.json` beside the file, so one run gives both media and metadata. */
  writeInfoJson?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: DownloadProgress) => void;
}

export interface YtDlpEngine {
  /** Extracts metadata for one video (never a playlist). */
  probe(url: string, signal?: AbortSignal): Promise<YtDlpInfo>;
  /** Downloads into outDir and returns the path of the final file. */
  download(req: DownloadRequest): Promise<string>;
}

export interface YtDlpEngineOptions {
  binary: string;
  ffmpegLocation?: string;
  /** Extra yt-dlp plugin folders (`--plugin-dirs`), e.g. from YTDLP_PLUGIN_DIRS. */
  pluginDirs?: string[];
  extraArgs?: string[];
}

const PROGRESS_PREFIX = 'MEDIASVC-PROGRESS ';

/** Arguments of every yt-dlp run: no user config, one video, Node as the JS runtime (YouTube needs one). */
export function ytdlpBaseArgs(opts: { ffmpegLocation?: string; pluginDirs?: string[]; extraArgs?: string[] }): string[] {
  return [
    '--ignore-config',
    '--no-playlist',
    '--no-warnings',
    '--no-cache-dir',
    '--js-runtimes',
    `node:${process.execPath}`,
    ...(opts.ffmpegLocation ? ['--ffmpeg-location', opts.ffmpegLocation] : []),
    ...(opts.pluginDirs ?? []).flatMap((d) => ['--plugin-dirs', d]),
    ...(opts.extraArgs ?? []),
  ];
}

/** Runs the pinned yt-dlp as a child process with JSON output. */
export function createYtDlpEngine(opts: YtDlpEngineOptions): YtDlpEngine {
  const common = ytdlpBaseArgs(opts);

  return {
    async probe(url, signal) {
      const res = await runProcess(opts.binary, { args: [...common, '--dump-single-json', '--', url], signal });
      if (res.code !== 0) throw classify(res.stderr, url);
      return parseSingleVideoJson<YtDlpInfo>(res.stdout);
    },

    async download(req) {
      await fs.mkdir(req.outDir, { recursive: true });
      const args = [
        ...common,
        '--newline',
        '--progress',
        '--progress-template',
        `download:${PROGRESS_PREFIX}%(progress.downloaded_bytes)s %(progress.total_bytes)s %(progress.total_bytes_estimate)s`,
        '--print',
        'after_move:filepath',
        '--no-simulate',
        '--no-part',
        '-o',
        path.join(req.outDir, 'source.%(ext)s'),
        '-f',
        req.format,
        ...(req.sort ? ['-S', req.sort] : []),
        ...(req.mergeOutputFormat ? ['--merge-output-format', req.mergeOutputFormat] : []),
        ...(req.maxFilesize ? ['--max-filesize', String(req.maxFilesize)] : []),
        ...(req.matchFilter ? ['--match-filter', req.matchFilter] : []),
        ...(req.writeInfoJson ? ['--write-info-json'] : []),
        '--',
        req.url,
      ];
      const res = await runProcess(opts.binary, {
        args,
        signal: req.signal,
        onLine: (line) => {
          if (!line.startsWith(PROGRESS_PREFIX) || !req.onProgress) return;
          const [done, total, estimate] = line.slice(PROGRESS_PREFIX.length).split(' ').map(Number);
          const t = Number.isFinite(total) && total! > 0 ? total! : Number.isFinite(estimate) && estimate! > 0 ? estimate! : null;
          const d = Number.isFinite(done) ? done! : 0;
          req.onProgress({ downloadedBytes: d, totalBytes: t, fraction: t ? Math.min(1, d / t) : null });
        },
      });
      if (req.signal?.aborted) throw new YtDlpError('failed', 'download cancelled');
      if (res.code !== 0) throw classify(res.stderr, req.url);
      const printed = res.stdout.trim().split('\n').filter(Boolean).pop();
      if (!printed) {
        if (/File is larger than max-filesize/i.test(res.stdout + res.stderr)) {
          throw new YtDlpError('unavailable', `The source is larger than the limit of ${req.maxFilesize} bytes`);
        }
        // --print makes yt-dlp quiet, so a clean exit without a file under a match filter is the filter's skip
        if (req.matchFilter || /does not pass filter/i.test(res.stdout + res.stderr)) {
          throw new YtDlpError('filtered', 'The source is outside the limits (a live stream, or longer than the maximum duration)');
        }
        throw new YtDlpError('failed', 'yt-dlp finished without producing a file');
      }
      await fs.access(printed);
      return printed;
    },
  };
}

/** yt-dlp's `--dump-single-json` output for one video; a playlist or unreadable output is a YtDlpError. */
export function parseSingleVideoJson<T extends { _type?: string }>(stdout: string): T {
  let info: T;
  try {
    info = JSON.parse(stdout) as T;
  } catch {
    throw new YtDlpError('failed', 'yt-dlp printed no readable metadata');
  }
  if (info._type === 'playlist') throw new YtDlpError('unsupported', 'The URL is a playlist; pass the URL of a single video');
  return info;
}

/** Turns yt-dlp's last ERROR line into a classified YtDlpError. */
export function classify(stderr: string, url: string): YtDlpError {
  const errLine =
    stderr
      .split('\n')
      .filter((l) => l.startsWith('ERROR:'))
      .pop()
      ?.replace(/^ERROR:\s*/, '')
      .replace(/^\[[^\]]+\]\s*/, '') ?? stderr.trim().split('\n').pop() ?? 'yt-dlp failed';
  if (/Unsupported URL|no video formats|No media found|not a valid URL|is not a valid URL/i.test(errLine)) {
    return new YtDlpError('unsupported', `No platform handler supports ${url}: ${errLine}`);
  }
  if (/HTTP Error 4\d\d|Video unavailable|Private video|removed|not available|does not exist|404/i.test(errLine)) {
    return new YtDlpError('unavailable', `The source is not available: ${errLine}`);
  }
  return new YtDlpError('failed', `yt-dlp failed: ${errLine}`);
}
