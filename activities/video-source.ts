import { ApplicationFailure, Context } from '@temporalio/activity';
import type { FfmpegEngine, ProbeResult, ProbeStream } from '../engines/ffmpeg/ffmpeg.engine';
import { FAILURE_TYPES } from '../lib/jobs';
import { keepAlive, progressReporter } from './heartbeat';
import { durationOf, probeDownloaded, roundMs, videoStreamOf } from './media-probe';

/** The source's first real video stream and duration; fails the job when there is none. */
export async function videoSource(ffmpeg: FfmpegEngine, file: string): Promise<{ probe: ProbeResult; video: ProbeStream; duration: number }> {
  const probe = await probeDownloaded(ffmpeg, file);
  const video = videoStreamOf(probe);
  if (!video) throw ApplicationFailure.nonRetryable('The source has no video track to take frames from', FAILURE_TYPES.unavailable);
  const duration = durationOf(probe);
  if (!(duration > 0)) throw ApplicationFailure.nonRetryable('The source has no measurable duration', FAILURE_TYPES.unavailable);
  return { probe, video, duration };
}

/** Fails the job (not retried, refunded): a requested time lies at or past the end of the source. */
export function pastEnd(field: string, at: number, duration: number): never {
  throw ApplicationFailure.nonRetryable(`${field} (${roundMs(at)} s) is past the end of the source, which is ${roundMs(duration)} s long`, FAILURE_TYPES.rejected);
}

/** One ffmpeg run with heartbeats and cancellation; a tool failure is retried (it may be transient). */
export async function runFfmpegStep(ffmpeg: FfmpegEngine, args: string[], durationHint: number, range: [number, number]) {
  const stop = keepAlive();
  try {
    return await ffmpeg.run({ args, durationHint, signal: Context.current().cancellationSignal, onProgress: progressReporter(range) });
  } catch (err) {
    throw ApplicationFailure.retryable((err as Error).message, 'FfmpegFailed');
  } finally {
    stop();
  }
}
