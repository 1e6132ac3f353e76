import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { DirectMediaError, downloadDirectMedia, probeByteRanges, probeDirectMedia, readByteRange, type DirectMedia } from '../../engines/direct-media';
import { checkUrlAddress, EgressRefusedError } from '../../engines/egress/address-check';
import type { EgressProxy } from '../../engines/egress/egress-proxy';
import type { FfmpegEngine, ProbeResult } from '../../engines/ffmpeg/ffmpeg.engine';
import { findMp4Index, probeOfMp4Index } from '../../engines/ffmpeg/mp4-index';
import type { Storage } from '../../engines/storage';
import { toVideoInfo } from '../../engines/ytdlp/video-info';
import type { DownloadRequest, YtDlpEngine, YtDlpInfo } from '../../engines/ytdlp/ytdlp.engine';
import type { Config } from '../../lib/config';
import { ytdlpSelection } from '../../engines/ytdlp/format-selection';
import { JobFailure } from '../../lib/job-failure';
import type { SourceSummary } from '../../jobs/types';
import type { DownloadFormat, Quality } from '../../lib/media-vocabulary';
import { sourceLimits, tooLargeMessage, tooLongMessage, type PlanName } from '../../lib/plans';
import { uploadIdOf } from '../../lib/uploads';
import type { VideoInfo } from '../../lib/video-info';
import { watchDownload } from './download-watch';
import { asRefusal, refusalFailure, throughEgress } from '../step/egress-run';
import { assertClipWithin } from '../step/failures';
import { unreadableMedia } from '../step/media-probe';
import { alive, keepAlive, progressReporter } from '../step/heartbeat';
import { takeUpload } from './upload';
import { directFileInfo, directTitle, fileNameOf, INDEX_CHUNK_BYTES, overLimit, PAGE_EXTRACTORS, seekableFormat, toFailure, withinLimits } from './source-facts';
import type { RemoteMedia } from './video-source';

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
  /** The account's plan: its source limits (absent on jobs started by older releases: the service's own). */
  plan?: PlanName;
  url: string;
  quality: Quality;
  format: DownloadFormat | null;
  progressRange: [number, number];
}

export interface ResolveSourceInput extends DownloadSourceInput {
  /**
   * What the job reads of the source. `video` (one frame or a window of the picture) and `av`
   * (a window with its sound) are served by seeking in the media URL when the source is one
   * progressive http(s) file; `whole` (and any source that is not such a file) is downloaded.
   */
  reads: 'video' | 'av' | 'whole';
  /** A clip of the source (seconds): a range past its end fails before anything is downloaded. */
  clipStart?: number | null;
  clipEnd?: number | null;
}

/** A source within the limits: downloaded (sourceFile), or to be read in place (media). */
export interface ResolvedSource {
  title: string;
  duration: number | null;
  sourceFile: string | null;
  media: RemoteMedia | null;
  /** ffprobe of the downloaded file when this step made one, so the processing step need not probe it again. */
  sourceProbe?: ProbeResult;
}

/** Where a source comes from: an upload, a plain media file, or a page yt-dlp reads. */
type SourceOrigin = { kind: 'upload'; uploadId: string } | { kind: 'direct'; media: DirectMedia } | { kind: 'extractor' };

/** Reading and fetching sources (yt-dlp, direct media over HTTP) for the `media-fetch` queue. */
export function createSourceActivities(deps: SourceDeps) {
  const { ytdlp, ffmpeg, storage, egress, config } = deps;
  const limitsOf = (input: { plan?: PlanName }) => sourceLimits(input.plan, config);

  async function assertSafe(url: string): Promise<void> {
    const check = await checkUrlAddress(url, config.allowPrivateNetwork);
    if (!check.ok) throw JobFailure.user('rejected', `The source URL ${check.reason}`);
  }

  /**
   * Where a source comes from, the first thing every source step asks: an upload of the account's,
   * or (once its address is checked) a plain media file (a HEAD request says so) or a page for yt-dlp.
   */
  async function originOf(url: string, opts: { uploads: boolean } = { uploads: true }): Promise<SourceOrigin> {
    const uploadId = opts.uploads ? uploadIdOf(url) : null;
    if (uploadId) return { kind: 'upload', uploadId };
    await assertSafe(url);
    const media = await probeDirectMedia(url, config.allowPrivateNetwork).catch((err: unknown) => {
      throw asRefusal(err);
    });
    return media ? { kind: 'direct', media } : { kind: 'extractor' };
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
    const pageFile = PAGE_EXTRACTORS.has(info.extractor_key ?? '') && /^https?$/.test(single?.protocol ?? info.protocol ?? '');
    if (!(info.direct || pageFile) || !target || (info.duration && info.height)) return info;
    const signal = Context.current().cancellationSignal;
    const p = await alive(() => throughEgress(egress, (proxyUrl) => ffmpeg.probe(target, { proxyUrl, signal }).catch(() => null)));
    const v = p?.streams.find((s) => s.codec_type === 'video');
    const a = p?.streams.find((s) => s.codec_type === 'audio');
    if (!p || (!v && !a)) {
      throw JobFailure.user('unsupported', `No platform handler supports ${url}: it is not a video page, a playlist of one video, or a media file`);
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
  async function ytdlpDownload(input: DownloadSourceInput, extra: Pick<DownloadRequest, 'matchFilter' | 'writeInfoJson' | 'infoJson'> = {}): Promise<string> {
    const report = progressReporter(input.progressRange);
    const stop = keepAlive();
    const sel = ytdlpSelection(input.quality, input.format);
    const limits = limitsOf(input);
    const outDir = path.join(storage.workDirOf(input.jobId), 'download');
    const watch = watchDownload(outDir, limits, ffmpeg, Context.current().cancellationSignal);
    try {
      return await throughEgress(egress, (proxyUrl) => ytdlp.download({
        url: input.url,
        proxyUrl,
        outDir,
        format: sel.format,
        sort: sel.sort,
        maxFilesize: limits.maxBytes,
        ...extra,
        signal: watch.signal,
        onProgress: (p) => p.fraction !== null && report(p.fraction),
      }));
    } catch (err) {
      const over = watch.exceeded();
      throw over ? overLimit(over.message) : toFailure(err, limits);
    } finally {
      watch.stop();
      stop();
    }
  }

  /**
   * A plain audio/video file needs no extractor: stream it with Node (same address rule and size
   * limit) and check its duration with ffprobe, saving a yt-dlp process start per job.
   */
  async function fetchDirect(input: DownloadSourceInput, length: number | null): Promise<{ sourceFile: string; title: string; duration: number | null; sourceProbe: ProbeResult }> {
    const limits = limitsOf(input);
    if (length !== null && length > limits.maxBytes) throw overLimit(tooLargeMessage(limits, length));
    const workDir = storage.workDirOf(input.jobId);
    const name = fileNameOf(input.url);
    const ext = (path.extname(name).slice(1).replace(/[^A-Za-z0-9]/g, '') || 'media').toLowerCase();
    const file = path.join(workDir, 'download', `source.${ext}`);
    await fs.mkdir(path.dirname(file), { recursive: true });
    const stop = keepAlive();
    const watch = watchDownload(path.dirname(file), limits, ffmpeg, Context.current().cancellationSignal);
    try {
      await downloadDirectMedia(input.url, file, {
        allowPrivate: config.allowPrivateNetwork,
        maxBytes: limits.maxBytes,
        signal: watch.signal,
        onProgress: progressReporter(input.progressRange),
      });
    } catch (err) {
      const over = watch.exceeded();
      if (over) throw overLimit(over.message);
      if (err instanceof EgressRefusedError) throw refusalFailure(err);
      if (err instanceof DirectMediaError && err.reason === 'too_large') throw overLimit(tooLargeMessage(limits));
      // a 4xx is the source's answer, not a passing fault
      if (err instanceof DirectMediaError && err.status !== undefined && err.status >= 400 && err.status < 500) throw JobFailure.user('unavailable', `The source is not available: ${err.message}`);
      throw JobFailure.tool('download', `Downloading the source failed: ${(err as Error).message}`);
    } finally {
      watch.stop();
      stop();
    }
    const probe = await ffmpeg.probe(file).catch((e: Error) => {
      throw unreadableMedia(e);
    });
    const duration = probe.format.duration ?? null;
    if (duration !== null && duration > limits.maxSeconds) throw overLimit(tooLongMessage(limits, duration));
    return { sourceFile: path.relative(workDir, file), title: directTitle(input.url), duration, sourceProbe: probe };
  }

  /**
   * Whether ffmpeg can seek in this URL: the origin must really serve byte ranges (checked with a
   * small range request); an index at the end of the file is then no obstacle. The answer is the
   * job's: a source that passes is read in place, any other is downloaded. Null when it does not;
   * else the URL redirects ended on and the file's size.
   */
  async function rangesOf(url: string, headers: Record<string, string> = {}): Promise<{ url: string; size: number } | null> {
    const signal = Context.current().cancellationSignal;
    return probeByteRanges(url, { allowPrivate: config.allowPrivateNetwork, headers, signal }).catch((err: unknown) => {
      throw asRefusal(err);
    });
  }

  /**
   * What ffprobe would say of a file read in place, from its MP4 index fetched with a range request
   * or two (no ffprobe process, no proxy run); null for anything that is not a readable MP4 index.
   */
  async function indexProbe(ranges: { url: string; size: number }, headers: Record<string, string>): Promise<ProbeResult | null> {
    const signal = Context.current().cancellationSignal;
    const read = (start: number, length: number) => readByteRange(ranges.url, start, length, { allowPrivate: config.allowPrivateNetwork, headers, signal });
    const index = await alive(() => findMp4Index(read, ranges.size, { chunk: INDEX_CHUNK_BYTES, maxReads: 3 }));
    return index && probeOfMp4Index(index, ranges.size);
  }

  /** A plain media file: read in place (measured from its MP4 index, or by ffprobe through the egress proxy) when its origin serves ranges, else streamed to disk by Node. */
  async function resolveDirect(input: ResolveSourceInput, length: number | null): Promise<ResolvedSource> {
    const signal = Context.current().cancellationSignal;
    const ranges = input.reads === 'whole' ? null : await rangesOf(input.url);
    // an MP4's index says what the steps need; ffprobe reads every other container
    const probed = ranges && ((await indexProbe(ranges, {})) ?? (await alive(() => throughEgress(egress, (proxyUrl) => ffmpeg.probe(input.url, { proxyUrl, signal }).catch(() => null)))));
    // a file ffprobe cannot read in place is downloaded and read again, where its real problem shows
    if (!probed?.streams.some((x) => x.codec_type === 'video' || x.codec_type === 'audio')) {
      const fetched = await fetchDirect(input, length);
      assertClipWithin(input.clipStart, input.clipEnd, fetched.duration);
      return { ...fetched, media: null };
    }
    const duration = probed.format.duration ?? null;
    const size = length ?? probed.format.size ?? null;
    const limits = limitsOf(input);
    withinLimits(config, { id: '', duration, filesize: size }, limits);
    assertClipWithin(input.clipStart, input.clipEnd, duration);
    return { title: directTitle(input.url), duration, sourceFile: null, media: { url: input.url, headers: {}, probe: probed, maxBytes: limits.maxBytes } };
  }

  const activities = {
    /** Metadata for `GET /v1/info`. */
    async readInfo(url: string): Promise<VideoInfo> {
      // a plain media file needs no Python start-up: a HEAD request and an ffprobe say all yt-dlp would
      const origin = await originOf(url, { uploads: false });
      const info = origin.kind === 'direct' ? directFileInfo(url, origin.media) : await probe(url);
      return toVideoInfo(url, await measureDirect(url, info));
    },

    /** Checks the safety limits (duration, size, live) before anything is downloaded. */
    async probeSource(url: string): Promise<SourceSummary> {
      const upload = uploadIdOf(url);
      if (upload) {
        // measured when it was received (an older history's step: jobs now take uploads in resolveSource)
        const info = await storage.readUploadInfo(upload);
        if (!info) throw JobFailure.user('unavailable', `Upload ${upload} is no longer stored: it expired before the job ran; upload the file again`);
        return withinLimits(config, { id: upload, title: info.filename, duration: info.duration ?? null }, limitsOf({}));
      }
      return withinLimits(config, await probe(url), limitsOf({}));
    },

    /**
     * The source of a media job in one step, with one yt-dlp run at most: the limits (live, duration,
     * size) are checked, then the source is either left in place for jobs that read only part of it
     * (a frame, a short window: ffmpeg seeks in the URL through the egress proxy, fetching only
     * those bytes) or downloaded from the probe's own info JSON. A plain media file needs no yt-dlp.
     */
    async resolveSource(input: ResolveSourceInput): Promise<ResolvedSource> {
      const origin = await originOf(input.url);
      if (origin.kind === 'upload') {
        const taken = await takeUpload(deps, input.jobId, origin.uploadId, limitsOf(input));
        assertClipWithin(input.clipStart, input.clipEnd, taken.duration);
        return { ...taken, media: null };
      }
      if (origin.kind === 'direct') return resolveDirect(input, origin.media.length);
      const sel = ytdlpSelection(input.quality, input.format);
      const stop = keepAlive();
      let info: YtDlpInfo;
      try {
        const signal = Context.current().cancellationSignal;
        info = await throughEgress(egress, (proxyUrl) => ytdlp.probe(input.url, { proxyUrl, signal, format: sel.format, sort: sel.sort }));
      } catch (err) {
        throw toFailure(err);
      } finally {
        stop();
      }
      const limits = limitsOf(input);
      const summary = withinLimits(config, info, limits);
      assertClipWithin(input.clipStart, input.clipEnd, summary.duration);
      const media = input.reads === 'whole' ? null : seekableFormat(info, input.reads);
      const ranges = media && (await rangesOf(media.url, media.headers));
      // without an MP4 index to read here, the processing step probes the URL itself
      if (media && ranges) return { ...summary, sourceFile: null, media: { ...media, probe: await indexProbe(ranges, media.headers), maxBytes: limits.maxBytes } };
      const workDir = storage.workDirOf(input.jobId);
      const infoJson = path.join(workDir, 'download', 'probe.info.json');
      await fs.mkdir(path.dirname(infoJson), { recursive: true });
      await fs.writeFile(infoJson, JSON.stringify(info));
      const file = await ytdlpDownload(input, { infoJson });
      return { ...summary, sourceFile: path.relative(workDir, file), media: null };
    },

    /**
     * Fetches the source within the limits (live, duration, size) and reads title and duration in
     * one step: a direct file over plain HTTP, anything else in one yt-dlp run. For jobs whose
     * output does not need the metadata first (speech).
     */
    async fetchSource(input: DownloadSourceInput): Promise<{ sourceFile: string; title: string; duration: number | null }> {
      const origin = await originOf(input.url);
      if (origin.kind === 'upload') return takeUpload(deps, input.jobId, origin.uploadId, limitsOf(input));
      if (origin.kind === 'direct') {
        // speech steps read the file whole: the probe would only weigh on the job's history
        const { sourceProbe: _unused, ...fetched } = await fetchDirect(input, origin.media.length);
        return fetched;
      }
      const filter = [config.allowLive ? null : '!is_live', `duration <=? ${limitsOf(input).maxSeconds}`].filter(Boolean).join(' & ');
      const file = await ytdlpDownload(input, { matchFilter: filter, writeInfoJson: true });
      const info = JSON.parse(await fs.readFile(path.join(path.dirname(file), 'source.info.json'), 'utf8')) as YtDlpInfo;
      const workDir = storage.workDirOf(input.jobId);
      return { sourceFile: path.relative(workDir, file), title: info.title ?? info.id, duration: typeof info.duration === 'number' ? info.duration : null };
    },

    /** Downloads the best matching rendition into the job's work folder; returns its path relative to that folder. */
    async downloadSource(input: DownloadSourceInput): Promise<string> {
      const upload = uploadIdOf(input.url);
      if (upload) return (await takeUpload(deps, input.jobId, upload, limitsOf(input))).sourceFile;
      await assertSafe(input.url);
      return path.relative(storage.workDirOf(input.jobId), await ytdlpDownload(input));
    },
  };

  /** A downloaded source goes on to the job's next step through storage, where steps share no disk. */
  async function handedOn<T extends { sourceFile: string | null }>(jobId: string, result: T): Promise<T> {
    if (result.sourceFile) await storage.shareWorkFile(jobId, result.sourceFile);
    return result;
  }

  return {
    ...activities,
    resolveSource: async (input: ResolveSourceInput): Promise<ResolvedSource> => handedOn(input.jobId, await activities.resolveSource(input)),
    fetchSource: async (input: DownloadSourceInput) => handedOn(input.jobId, await activities.fetchSource(input)),
    downloadSource: async (input: DownloadSourceInput): Promise<string> => (await handedOn(input.jobId, { sourceFile: await activities.downloadSource(input) })).sourceFile,
  };
}

export type SourceActivities = ReturnType<typeof createSourceActivities>;

