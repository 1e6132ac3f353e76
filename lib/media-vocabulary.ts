// The media vocabulary shared by engines and operations: qualities, formats and model sizes. A leaf
// module, so a tool's engine and an operation's request form name the same things without either
// importing the other.

export const QUALITIES = ['best', '1080p', '720p', '480p', 'audio'] as const;
export type Quality = (typeof QUALITIES)[number];

export const DOWNLOAD_FORMATS = ['mp4', 'webm', 'mkv', 'mp3', 'wav'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

/** faster-whisper model sizes the service offers. */
export const MODEL_SIZES = ['tiny', 'base', 'small', 'medium'] as const;
export type ModelSize = (typeof MODEL_SIZES)[number];
