// The source steps on the `media-fetch` queue. Each asks where its source comes from (origin.ts),
// then opens it one of three ways, each in its own module: an upload (upload.ts), a plain media file
// (direct-file.ts), or a page yt-dlp reads (extractor.ts).
import path from 'node:path';
import { toVideoInfo } from '../../engines/ytdlp/video-info';
import type { SourceSummary } from '../../lib/job-reports';
import { JobFailure } from '../../lib/job-failure';
import { sourceLimits, type PlanName } from '../../lib/plans';
import { uploadIdOf } from '../../lib/uploads';
import type { VideoInfo } from '../../lib/video-info';
import { assertClipWithin } from '../step/failures';
import { fetchDirectAudio, fetchDirectFile, openDirectFile } from './direct-file';
import { downloadWithYtdlp, fetchWithYtdlp, measureDirect, openWithYtdlp, probeWithYtdlp } from './extractor';
import { assertSafeSource, originOf } from './origin';
import { directFileInfo, withinLimits } from './source-facts';
import type { DownloadSourceInput, FetchedSource, ResolvedSource, ResolveSourceInput, SourceDeps } from './types';
import { takeUpload } from './upload';
import { fetchTextFile } from './text-file';

export type { DownloadSourceInput, ResolvedSource, ResolveSourceInput, SourceDeps } from './types';

/** Reading and fetching sources (yt-dlp, direct media over HTTP, uploads) for the `media-fetch` queue. */
export function createSourceActivities(deps: SourceDeps) {
  const { storage, config } = deps;
  const limitsOf = (input: { plan?: PlanName }) => sourceLimits(input.plan, config);
  const allowPrivateNetwork = config.allowPrivateNetwork;

  const activities = {
    /** Metadata for `GET /v1/info`. */
    async readInfo(url: string): Promise<VideoInfo> {
      // a plain media file needs no Python start-up: a HEAD request and an ffprobe say all yt-dlp would
      const origin = await originOf(url, { uploads: false, allowPrivateNetwork, cookies: deps.ytdlp.hasCookiesFor(url) });
      const info = origin.kind === 'direct' ? directFileInfo(url, origin.media) : await probeWithYtdlp(deps, url);
      return toVideoInfo(url, await measureDirect(deps, url, info));
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
      await assertSafeSource(url, allowPrivateNetwork);
      return withinLimits(config, await probeWithYtdlp(deps, url), limitsOf({}));
    },

    /**
     * The source of a media job in one step, with one yt-dlp run at most: the limits (live, duration,
     * size) are checked, then the source is either left in place for jobs that read only part of it
     * (a frame, a short window: ffmpeg seeks in the URL through the egress proxy, fetching only
     * those bytes) or downloaded. A plain media file needs no yt-dlp.
     */
    async resolveSource(input: ResolveSourceInput): Promise<ResolvedSource> {
      const origin = await originOf(input.url, { uploads: true, allowPrivateNetwork, cookies: deps.ytdlp.hasCookiesFor(input.url) });
      if (origin.kind === 'upload') {
        const taken = await takeUpload(deps, input.jobId, origin.uploadId, limitsOf(input));
        assertClipWithin(input.clipStart, input.clipEnd, taken.duration);
        return { ...taken, media: null };
      }
      if (origin.kind === 'direct') return openDirectFile(deps, input, limitsOf(input), origin.media.length);
      return openWithYtdlp(deps, input, limitsOf(input));
    },

    /**
     * Fetches the source within the limits (live, duration, size) and reads title and duration in
     * one step. For jobs whose output does not need the metadata first (speech).
     */
    async fetchSource(input: DownloadSourceInput): Promise<FetchedSource> {
      const origin = await originOf(input.url, { uploads: true, allowPrivateNetwork, cookies: deps.ytdlp.hasCookiesFor(input.url) });
      if (origin.kind === 'upload') return takeUpload(deps, input.jobId, origin.uploadId, limitsOf(input), input.slot);
      if (origin.kind === 'direct') {
        // speech steps read only the audio: a video file's picture need not reach the disk
        const audio = input.quality === 'audio' ? await fetchDirectAudio(deps, input, limitsOf(input), origin.media) : null;
        if (audio) return audio;
        // speech steps read the file whole: the probe would only weigh on the job's history
        const { sourceProbe: _unused, ...fetched } = await fetchDirectFile(deps, input, limitsOf(input), origin.media.length);
        return fetched;
      }
      return fetchWithYtdlp(deps, input, limitsOf(input));
    },

    /** A subtitle file (or other small text) to translate, into the job's work folder: its path relative to that folder. */
    async fetchTextSource(input: { jobId: string; url: string }): Promise<string> {
      return fetchTextFile({ storage, allowPrivateNetwork }, input.jobId, input.url);
    },

    /** Downloads the best matching rendition into the job's work folder; returns its path relative to that folder. */
    async downloadSource(input: DownloadSourceInput): Promise<string> {
      const upload = uploadIdOf(input.url);
      if (upload) return (await takeUpload(deps, input.jobId, upload, limitsOf(input))).sourceFile;
      await assertSafeSource(input.url, allowPrivateNetwork);
      return path.relative(storage.workDirOf(input.jobId), await downloadWithYtdlp(deps, input, limitsOf(input)));
    },
  };

  /** A downloaded source goes on to the job's next step through storage, where steps share no disk. */
  async function handedOn<T extends { sourceFile: string | null; subtitleFiles?: { file: string }[] }>(jobId: string, result: T): Promise<T> {
    if (result.sourceFile) await storage.shareWorkFile(jobId, result.sourceFile);
    for (const s of result.subtitleFiles ?? []) await storage.shareWorkFile(jobId, s.file);
    return result;
  }

  return {
    ...activities,
    resolveSource: async (input: ResolveSourceInput): Promise<ResolvedSource> => handedOn(input.jobId, await activities.resolveSource(input)),
    fetchSource: async (input: DownloadSourceInput) => handedOn(input.jobId, await activities.fetchSource(input)),
    fetchTextSource: async (input: { jobId: string; url: string }): Promise<string> => (await handedOn(input.jobId, { sourceFile: await activities.fetchTextSource(input) })).sourceFile,
    downloadSource: async (input: DownloadSourceInput): Promise<string> => (await handedOn(input.jobId, { sourceFile: await activities.downloadSource(input) })).sourceFile,
  };
}

export type SourceActivities = ReturnType<typeof createSourceActivities>;
