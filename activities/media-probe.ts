// Reading downloaded media: shared by the download, preview, fingerprint and speech activities.
import { ApplicationFailure } from '@temporalio/activity';
import type { FfmpegEngine, ProbeResult, ProbeStream } from '../engines/ffmpeg/ffmpeg.engine';
import { FAILURE_TYPES } from '../lib/jobs';

/** ffprobe of a downloaded file; a file ffprobe cannot read fails the job (not retried). */
export function probeDownloaded(ffmpeg: FfmpegEngine, file: string): Promise<ProbeResult> {
  return ffmpeg.probe(file).catch((e: Error) => {
    throw unreadableMedia(e);
  });
}

/** Why a downloaded file is refused, as the job's failure (the tool's own words stay in the cause). */
export function unreadableMedia(e: Error): ApplicationFailure {
  // the input policy refused a playlist or file list posing as media (it would open other files)
  if (/not on (the )?(format )?whitelist|allowed_segment_extensions/i.test(e.message)) {
    return ApplicationFailure.nonRetryable('The source is a playlist or a list of other files posing as a media file; it is not opened', FAILURE_TYPES.rejected, e.message);
  }
  return ApplicationFailure.nonRetryable('The downloaded file is not readable audio or video', FAILURE_TYPES.unavailable, e.message);
}

/** An attached picture (cover art) rather than a video track. */
export function isCoverArt(s: { codec_name?: string; nb_frames?: string }): boolean {
  return (s.codec_name === 'mjpeg' || s.codec_name === 'png') && (s.nb_frames === '1' || s.nb_frames === undefined);
}

/** The first real video stream, if any. */
export function videoStreamOf(probe: ProbeResult): ProbeStream | undefined {
  return probe.streams.find((s) => s.codec_type === 'video' && !isCoverArt(s));
}

/** Codecs of the first video (not cover art) and audio streams. */
export function codecsOf(probe: ProbeResult): { vcodec: string | null; acodec: string | null } {
  return { vcodec: videoStreamOf(probe)?.codec_name ?? null, acodec: probe.streams.find((s) => s.codec_type === 'audio')?.codec_name ?? null };
}

/** The container's duration, or the longest stream's. */
export function durationOf(p: ProbeResult): number {
  return p.format.duration ?? Math.max(0, ...p.streams.map((s) => Number(s.duration) || 0));
}

export function roundMs(n: number): number {
  return Math.round(n * 1000) / 1000;
}
