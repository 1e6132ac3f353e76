// Pure types shared by the API, workflows and activities. No runtime imports: workflows load this.

export const TASK_QUEUES = {
  fetch: 'media-fetch',
  process: 'media-process',
  speech: 'media-speech',
  control: 'control',
} as const;
export type TaskQueue = (typeof TASK_QUEUES)[keyof typeof TASK_QUEUES];
export const ALL_QUEUES: TaskQueue[] = Object.values(TASK_QUEUES);

export type Quality = 'best' | '1080p' | '720p' | '480p' | 'audio';
export type DownloadFormat = 'mp4' | 'webm' | 'mkv' | 'mp3' | 'wav';

export interface DownloadParams {
  url: string;
  quality: Quality;
  format: DownloadFormat | null;
  clip_start: string | null;
  clip_end: string | null;
  processing: string[] | null;
  webhook_url: string | null;
}

export interface CommentsParams {
  url: string;
  /** Top-level comments, 1..1000. */
  max_comments: number;
  sort: 'top' | 'newest';
  include_replies: boolean;
  webhook_url: string | null;
}

export type PreviewType = 'gif' | 'thumbnail' | 'mosaic' | 'clip';

/** Preview request, normalised: parameters that do not apply to preview_type are null. */
export interface PreviewParams {
  url: string;
  preview_type: PreviewType;
  /** thumbnail: frame time (null = 25% of the duration). */
  timestamp: string | null;
  /** gif, clip: start time (null = the start). */
  start: string | null;
  /** gif (≤ 15 s), clip (≤ 30 s): seconds. */
  duration: number | null;
  /** Output width in pixels (mosaic: the whole sheet); the height follows the aspect ratio. */
  width: number;
  /** mosaic grid. */
  columns: number | null;
  rows: number | null;
  /** gif frames per second. */
  fps: number | null;
  webhook_url: string | null;
}

export interface FingerprintParams {
  url: string;
  /** Frame time (null = 25% of the duration). */
  timestamp: string | null;
  hash_size: 8 | 16 | 32;
  webhook_url: string | null;
}

export type SpeechOutputFormat = 'json' | 'srt' | 'vtt';
export type WhisperModelSize = 'tiny' | 'base' | 'small' | 'medium';

export interface TranscribeParams {
  url: string;
  /** ISO 639-1, or null to detect. */
  language: string | null;
  output_format: SpeechOutputFormat;
  word_timestamps: boolean;
  model_size: WhisperModelSize;
  webhook_url: string | null;
}

export interface TranslateParams {
  url: string;
  target_language: string;
  source_language: string | null;
  output_format: SpeechOutputFormat;
  model_size: WhisperModelSize;
  webhook_url: string | null;
}

/** Normalised request parameters of each async operation (what `parameters` echoes). */
export interface JobParamsByType {
  preview: PreviewParams;
  fingerprint: FingerprintParams;
  download: DownloadParams;
  transcribe: TranscribeParams;
  translate: TranslateParams;
  comments: CommentsParams;
}
export type OperationType = keyof JobParamsByType;

/** The workflow input of one job: a discriminated union over the operation types. */
export type MediaJobInput = {
  [T in OperationType]: { jobId: string; jobType: T; sourceUrl: string; params: JobParamsByType[T] };
}[OperationType];

/** What an operation hands back for the job row. */
export interface JobOutput {
  /** Output path relative to the files directory. */
  outputFile: string;
  resultData: Record<string, unknown>;
}

export interface JobEnd {
  jobId: string;
  status: 'completed' | 'failed';
}

export interface SourceSummary {
  title: string;
  duration: number | null;
}

export interface FormatInfo {
  format_id: string;
  ext: string;
  quality: string | null;
  width: number | null;
  height: number | null;
  fps: number | null;
  filesize: number | null;
  vcodec: string | null;
  acodec: string | null;
  audio_only: boolean;
}

export interface VideoInfo {
  url: string;
  title: string;
  description: string | null;
  duration: number | null;
  thumbnail: string | null;
  upload_date: string | null;
  view_count: number | null;
  like_count: number | null;
  channel: string | null;
  channel_url: string | null;
  tags: string[];
  categories: string[];
  subtitles: string[];
  formats: FormatInfo[];
}

/** Heartbeat details of long activities: overall job progress, 0..100. */
export interface ProgressDetails {
  progress: number;
}

/** Failure types activities raise as non-retryable ApplicationFailures. */
export const FAILURE_TYPES = {
  unsupported: 'UnsupportedUrl',
  unavailable: 'SourceUnavailable',
  rejected: 'SourceRejected',
} as const;
