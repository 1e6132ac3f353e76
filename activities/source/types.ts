// What the source steps take and give, shared by the three ways a source opens (upload, direct file, yt-dlp).
import type { EgressProxy } from '../../engines/egress/egress-proxy';
import type { FfmpegEngine, ProbeResult } from '../../engines/ffmpeg/ffmpeg.engine';
import type { Storage } from '../../engines/storage';
import type { YtDlpEngine } from '../../engines/ytdlp/ytdlp.engine';
import type { Config } from '../../lib/config';
import type { DownloadFormat, Quality } from '../../lib/media-vocabulary';
import type { PlanName } from '../../lib/plans';
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
  /** A further file of the job (a reference clip): fetched into its own folder under download/, named so. */
  slot?: string;
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
  /** Languages (ISO 639-1) whose subtitle tracks the platform publishes, to fetch beside the media. */
  subtitles?: string[];
}

/** A platform's subtitle track fetched beside the media: its language as asked for, and the file (relative to the job's work folder). */
export interface PlatformSubtitles {
  language: string;
  file: string;
}

/** A source within the limits: downloaded (sourceFile), or to be read in place (media). */
export interface ResolvedSource {
  title: string;
  duration: number | null;
  sourceFile: string | null;
  media: RemoteMedia | null;
  /** ffprobe of the downloaded file when this step made one, so the processing step need not probe it again. */
  sourceProbe?: ProbeResult;
  /** The platform's subtitle tracks in the languages asked for, where it has them (SRT or WebVTT). */
  subtitleFiles?: PlatformSubtitles[];
}

/** A source fetched whole into the job's work folder (sourceFile relative to it). */
export interface FetchedSource {
  sourceFile: string;
  title: string;
  duration: number | null;
}
