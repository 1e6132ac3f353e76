import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { downloadDirectMedia, probeDirectMedia } from '../engines/direct-media';
import { checkUrlAddress, EgressRefusedError } from '../engines/egress/address-check';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import type { FfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import type { Storage } from '../engines/storage';
import { toVideoInfo } from '../engines/ytdlp/video-info';
import type { DownloadRequest, YtDlpEngine, YtDlpInfo } from '../engines/ytdlp/ytdlp.engine';
import { YtDlpError } from '../engines/ytdlp/ytdlp.engine';
import type { Config } from '../lib/config';
import { ytdlpSelection } from '../lib/download-plan';
import { FAILURE_TYPES, type SourceSummary } from '../lib/jobs';
import type { DownloadFormat, Quality } from '../lib/operations';
import type { VideoInfo } from '../lib/video-info';
import { asRefusal, refusalFailure, throughEgress } from './egress-run';
import { classifiedFailure } from './failures';
import { unreadableMedia } from './media-probe';
import { alive, keepAlive, progressReporter } from './heartbeat';

export interface SourceDeps {
  ytdlp: YtDlpEngine;
  /** ffprobe, to measure direct media files that carry no metadata of their own. */
  ffmpeg: FfmpegEngine;
  storage: Storage;
  /** Every connection yt-dlp and ffmpeg make goes through it (one run per invocation). */
  egress: EgressProxy;
  config: Pick<Config, 'allowPrivateNetwork' | 'maxSourceDurationSeconds' | 'maxSourceBytes' | 'allowLive'>;
}

export interface DownloadSourceInput {
  jobId: string;
  url: string;
  quality: Quality;
  format: DownloadFormat | null;
  progressRange: [number, number];
}

/** Reading and fetching sources (yt-dlp, direct media over HTTP) for the `media-fetch` queue. */
export function createSourceActivities(deps: SourceDeps) {
  const { ytdlp, ffmpeg, storage, egress, config } = deps;

  async function assertSafe(url: string): Promise<void> {
    const check = await checkUrlAddress(url, config.allowPrivateNetwork);
    if (!check.ok) throw ApplicationFailure.nonRetryable(`The source URL ${check.reason}`, FAILURE_TYPES.rejected);
  }

  async function probe(url: string): Promise<YtDlpInfo> {
    await assertSafe(url);
    const stop = keepAlive();
    try {
      const signal = Context.current().cancellationSignal;
      return await throughEgress(egress, (proxyUrl) => ytdlp.probe(url, { proxyUrl, signal }));
    } catch (err) {
      throw toFailure(err);
    } finally {
      stop();
    }
  }

  /**
   * A URL yt-dlp took for a media file itself (a direct link, or the one file a generic page points
   * to) carries little metadata: duration, size and streams are measured with ffprobe. A "file" in
   * which ffprobe finds no audio or video (a text file, say) is not media: unsupported, like any other URL.
   */
  async function measureDirect(url: string, info: YtDlpInfo): Promise<YtDlpInfo> {
    const single = info.formats?.length === 1 ? info.formats[0] : undefined;
    const target = single ? single.url : info.url;
    // a generic page's one progressive file (not a manifest, which ffmpeg never opens here)
    const pageFile = info.extractor_key === 'Generic' && /^https?$/.test(single?.protocol ?? info.protocol ?? '');
    if (!(info.direct || pageFile) || !target || (info.duration && info.height)) return info;
    const signal = Context.current().cancellationSignal;
    const p = await alive(() => throughEgress(egress, (proxyUrl) => ffmpeg.probe(target, { proxyUrl, signal }).catch(() => null)));
    const v = p?.streams.find((s) => s.codec_type === 'video');
    const a = p?.streams.find((s) => s.codec_type === 'audio');
    if (!p || (!v && !a)) {
      throw ApplicationFailure.nonRetryable(`No platform handler supports ${url}: it is not a video page, a playlist of one video, or a media file`, FAILURE_TYPES.unsupported);
    }
    const fps = v?.avg_frame_rate?.split('/').map(Number);
    return {
      ...info,
      duration: info.duration ?? p.format.duration ?? null,
      width: info.width ?? v?.width ?? null,
      height: info.height ?? v?.height ?? null,
      fps: info.fps ?? (fps && fps[1] ? Math.round((fps[0]! / fps[1]) * 1000) / 1000 : null),
      vcodec: info.vcodec ?? (v ? v.codec_name : 'none') ?? null,
      acodec: info.acodec ?? (a ? a.codec_name : 'none') ?? null,
      filesize: info.filesize ?? p.format.size ?? null,
    };
  }

  /** Downloads with yt-dlp into the job's work folder (heartbeats, cancellation, size limit); returns the file's absolute path. */
  async function ytdlpDownload(input: DownloadSourceInput, extra: Pick<DownloadRequest, 'matchFilter' | 'writeInfoJson'> = {}): Promise<string> {
    const report = progressReporter(input.progressRange);
    const stop = keepAlive();
    const sel = ytdlpSelection(input.quality, input.format);
    try {
      return await throughEgress(egress, (proxyUrl) => ytdlp.download({
        url: input.url,
        proxyUrl,
        outDir: path.join(storage.workDirOf(input.jobId), 'download'),
        format: sel.format,
        sort: sel.sort,
        maxFilesize: config.maxSourceBytes,
        ...extra,
        signal: Context.current().cancellationSignal,
        onProgress: (p) => p.fraction !== null && report(p.fraction),
      }));
    } catch (err) {
      throw toFailure(err);
    } finally {
      stop();
    }
  }

  /**
   * A plain audio/video file needs no extractor: stream it with Node (same address rule and size
   * limit) and check its duration with ffprobe, saving a yt-dlp process start per job.
   */
  async function fetchDirect(input: DownloadSourceInput, length: number | null): Promise<{ sourceFile: string; title: string; duration: number | null }> {
    if (length !== null && length > config.maxSourceBytes) {
      throw ApplicationFailure.nonRetryable(`The source is ${length} bytes, over the limit of ${config.maxSourceBytes} bytes`, FAILURE_TYPES.rejected);
    }
    const workDir = storage.workDirOf(input.jobId);
    const name = decodeURIComponent(path.posix.basename(new URL(input.url).pathname)) || 'media';
    const ext = (path.extname(name).slice(1).replace(/[^A-Za-z0-9]/g, '') || 'media').toLowerCase();
    const file = path.join(workDir, 'download', `source.${ext}`);
    await fs.mkdir(path.dirname(file), { recursive: true });
    const stop = keepAlive();
    try {
      await downloadDirectMedia(input.url, file, {
        allowPrivate: config.allowPrivateNetwork,
        maxBytes: config.maxSourceBytes,
        signal: Context.current().cancellationSignal,
        onProgress: progressReporter(input.progressRange),
      });
    } catch (err) {
      if (err instanceof EgressRefusedError) throw refusalFailure(err);
      const msg = (err as Error).message;
      if (/over the limit|larger than the limit/.test(msg)) throw ApplicationFailure.nonRetryable(msg, FAILURE_TYPES.rejected);
      if (/answered HTTP 4\d\d/.test(msg)) throw ApplicationFailure.nonRetryable(`The source is not available: ${msg}`, FAILURE_TYPES.unavailable);
      throw ApplicationFailure.retryable(`Downloading the source failed: ${msg}`, 'DirectDownloadFailed');
    } finally {
      stop();
    }
    const probe = await ffmpeg.probe(file).catch((e: Error) => {
      throw unreadableMedia(e);
    });
    const duration = probe.format.duration ?? null;
    if (duration !== null && duration > config.maxSourceDurationSeconds) {
      throw ApplicationFailure.nonRetryable(`The source is outside the limits: ${Math.round(duration)} s long, over the maximum of ${config.maxSourceDurationSeconds} s`, FAILURE_TYPES.rejected);
    }
    return { sourceFile: path.relative(workDir, file), title: name.replace(/\.[^.]+$/, '') || name, duration };
  }

  return {
    /** Metadata for `GET /v1/info`. */
    async readInfo(url: string): Promise<VideoInfo> {
      return toVideoInfo(url, await measureDirect(url, await probe(url)));
    },

    /** Checks the safety limits (duration, size, live) before anything is downloaded. */
    async probeSource(url: string): Promise<SourceSummary> {
      const info = await probe(url);
      if (!config.allowLive && (info.is_live || info.live_status === 'is_live' || info.live_status === 'is_upcoming')) {
        throw ApplicationFailure.nonRetryable('The source is a live stream; live streams are not supported', FAILURE_TYPES.rejected);
      }
      if (typeof info.duration === 'number' && info.duration > config.maxSourceDurationSeconds) {
        throw ApplicationFailure.nonRetryable(
          `The source is ${Math.round(info.duration)} s long, over the limit of ${config.maxSourceDurationSeconds} s`,
          FAILURE_TYPES.rejected,
        );
      }
      const size = info.filesize ?? info.filesize_approx;
      if (typeof size === 'number' && size > config.maxSourceBytes) {
        throw ApplicationFailure.nonRetryable(`The source is ${size} bytes, over the limit of ${config.maxSourceBytes} bytes`, FAILURE_TYPES.rejected);
      }
      return { title: info.title ?? info.id, duration: typeof info.duration === 'number' ? info.duration : null };
    },

    /**
     * Fetches the source within the limits (live, duration, size) and reads title and duration in
     * one step: a direct file over plain HTTP, anything else in one yt-dlp run. For jobs whose
     * output does not need the metadata first (speech).
     */
    async fetchSource(input: DownloadSourceInput): Promise<{ sourceFile: string; title: string; duration: number | null }> {
      await assertSafe(input.url);
      const direct = await probeDirectMedia(input.url, config.allowPrivateNetwork).catch((err: unknown) => {
        throw asRefusal(err);
      });
      if (direct) return fetchDirect(input, direct.length);
      const filter = [config.allowLive ? null : '!is_live', `duration <=? ${config.maxSourceDurationSeconds}`].filter(Boolean).join(' & ');
      const file = await ytdlpDownload(input, { matchFilter: filter, writeInfoJson: true });
      const info = JSON.parse(await fs.readFile(path.join(path.dirname(file), 'source.info.json'), 'utf8')) as YtDlpInfo;
      const workDir = storage.workDirOf(input.jobId);
      return { sourceFile: path.relative(workDir, file), title: info.title ?? info.id, duration: typeof info.duration === 'number' ? info.duration : null };
    },

    /** Downloads the best matching rendition into the job's work folder; returns its path relative to that folder. */
    async downloadSource(input: DownloadSourceInput): Promise<string> {
      await assertSafe(input.url);
      return path.relative(storage.workDirOf(input.jobId), await ytdlpDownload(input));
    },
  };
}

export type SourceActivities = ReturnType<typeof createSourceActivities>;

function toFailure(err: unknown): unknown {
  if (!(err instanceof YtDlpError)) return err;
  return classifiedFailure(err.kind === 'filtered' ? 'rejected' : err.kind, err.message, 'YtDlpFailed');
}
