// Reading downloaded media: shared by the download, preview, fingerprint and speech activities.
import { ApplicationFailure } from '@temporalio/activity';
import type { FfmpegEngine, ProbeResult, ProbeStream } from '../../engines/ffmpeg/ffmpeg.engine';
import { FfmpegError, mediaProblemOf } from '../../engines/ffmpeg/media-problems';
import { JobFailure } from '../../lib/job-failure';

/** ffprobe of a downloaded file; a file ffprobe cannot read fails the job (not retried). */
export function probeDownloaded(ffmpeg: FfmpegEngine, file: string): Promise<ProbeResult> {
  return ffmpeg.probe(file).catch((e: Error) => {
    throw unreadableMedia(e);
  });
}

/** Why a file is refused, as the job's failure (not retried): the source's problem in words, the tool's own lines in the details. */
export function unreadableMedia(e: Error): ApplicationFailure {
  const problem = (e instanceof FfmpegError ? e.problem : mediaProblemOf(e.message)) ?? 'it is not audio or video in a format that can be read';
  return sourceProblem(problem, e.message);
}

/**
 * A failed ffmpeg run as the job's failure. A problem of the source itself fails the job at once
 * (another try would read the same bytes); anything else may be transient and is retried. Either
 * way the message speaks of the source, never of the tool, whose words stay in the details.
 */
export function toolFailure(err: unknown): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const problem = err instanceof FfmpegError ? err.problem : null;
  if (problem) return sourceProblem(problem, err instanceof Error ? err.message : String(err));
  return JobFailure.tool('ffmpeg', CONVERSION_FAILED, err instanceof Error ? err.message : String(err));
}

/** The message of a conversion that kept failing with no recognisable cause. */
export const CONVERSION_FAILED = 'The source could not be converted: it may be damaged or in a form that cannot be converted';

function sourceProblem(problem: string, toolMessage: string): JobFailure {
  // a playlist or file list posing as media is refused by the input policy (it would open other files)
  const kind = problem === PLAYLIST_PROBLEM ? 'rejected' : 'unavailable';
  return JobFailure.user(kind, `The source could not be read: ${problem}`, toolMessage);
}

const PLAYLIST_PROBLEM = mediaProblemOf('not on whitelist');

/** An attached picture (cover art) rather than a video track. */
export function isCoverArt(s: { codec_name?: string; nb_frames?: string }): boolean {
  return (s.codec_name === 'mjpeg' || s.codec_name === 'png') && (s.nb_frames === '1' || s.nb_frames === undefined);
}

/** The first real video stream, if any. */
export function videoStreamOf(probe: ProbeResult): ProbeStream | undefined {
  return probe.streams.find((s) => s.codec_type === 'video' && !isCoverArt(s));
}

/** Codecs of the first video (not cover art) and audio streams, and the audio's sample rate. */
export function codecsOf(probe: ProbeResult): { vcodec: string | null; acodec: string | null; audioRate: number | null } {
  const audio = probe.streams.find((s) => s.codec_type === 'audio');
  return { vcodec: videoStreamOf(probe)?.codec_name ?? null, acodec: audio?.codec_name ?? null, audioRate: Number(audio?.sample_rate) || null };
}

/** The container's duration, or the longest stream's. */
export function durationOf(p: ProbeResult): number {
  return p.format.duration ?? Math.max(0, ...p.streams.map((s) => Number(s.duration) || 0));
}

export function roundMs(n: number): number {
  return Math.round(n * 1000) / 1000;
}
