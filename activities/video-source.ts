import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import type { FfmpegEngine, ProbeResult, ProbeStream } from '../engines/ffmpeg/ffmpeg.engine';
import { httpHeaderOptions } from '../engines/ffmpeg/input-policy';
import { FAILURE_TYPES } from '../lib/jobs';
import { throughEgress } from './egress-run';
import { alive, keepAlive, progressReporter } from './heartbeat';
import { durationOf, probeDownloaded, roundMs, unreadableMedia, videoStreamOf } from './media-probe';

/**
 * A source read in place over http(s) instead of downloaded: jobs that need one frame or a short
 * window seek in it, so only those bytes are fetched. Every request goes through the egress proxy.
 */
export interface RemoteMedia {
  url: string;
  /** Request headers the platform wants (yt-dlp's http_headers); empty for a plain file. */
  headers: Record<string, string>;
  /** ffprobe of the URL when the fetch step already made one (saves a second one here). */
  probe: ProbeResult | null;
}

/** Where a processing step reads its source: a downloaded file (relative to the job's work folder), or a URL. */
export interface SourceRef {
  sourceFile: string | null;
  media?: RemoteMedia | null;
}

/** A source ready for ffmpeg: its input options (`… -i X`) and how to run ffmpeg on it. */
export interface VideoInput {
  /** `-ss`-style options go before these; the result ends with `-i <file or URL>`. */
  input(before?: string[]): string[];
  /** An ffmpeg run over this input, through the egress proxy when it is a URL. */
  run(args: string[], durationHint: number, range: [number, number]): Promise<{ log: string; progress: Record<string, string> }>;
}

/** Opens a processing step's source: a local file, or a URL read through the egress proxy (only when one is given). */
export function openSource(ffmpeg: FfmpegEngine, egress: EgressProxy | undefined, workDir: string, ref: SourceRef): VideoInput & { probe(): Promise<ProbeResult> } {
  const media = ref.media ?? null;
  if (!media) {
    if (!ref.sourceFile) throw ApplicationFailure.nonRetryable('The step has no source to read', 'InternalError');
    const file = path.join(workDir, ref.sourceFile);
    return {
      input: (before = []) => [...before, '-i', file],
      run: (args, hint, range) => runFfmpegStep(ffmpeg, args, hint, range),
      probe: () => probeDownloaded(ffmpeg, file),
    };
  }
  if (!egress) throw ApplicationFailure.nonRetryable('Reading a source URL needs the egress proxy on this worker', 'InternalError');
  const headers = httpHeaderOptions(media.headers);
  return {
    input: (before = []) => [...before, ...headers, '-i', media.url],
    run: (args, hint, range) => throughEgress(egress, (proxyUrl) => runFfmpegStep(ffmpeg, args, hint, range, proxyUrl)),
    probe: async () =>
      media.probe ??
      (await alive(() =>
        throughEgress(egress, (proxyUrl) =>
          ffmpeg.probe(media.url, { proxyUrl, headers: media.headers, signal: Context.current().cancellationSignal }).catch((e: Error) => {
            throw unreadableMedia(e);
          }),
        ),
      )),
  };
}

/** The source's first real video stream and duration; fails the job when there is none. */
export async function videoSource(ffmpeg: FfmpegEngine, file: string): Promise<{ probe: ProbeResult; video: ProbeStream; duration: number }> {
  return videoOf(await probeDownloaded(ffmpeg, file));
}

/** The first real video stream and the duration of a probed source; fails the job when there is none. */
export function videoOf(probe: ProbeResult): { probe: ProbeResult; video: ProbeStream; duration: number } {
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
export async function runFfmpegStep(ffmpeg: FfmpegEngine, args: string[], durationHint: number, range: [number, number], proxyUrl?: string) {
  const stop = keepAlive();
  try {
    return await ffmpeg.run({ args, proxyUrl, durationHint, signal: Context.current().cancellationSignal, onProgress: progressReporter(range) });
  } catch (err) {
    throw ApplicationFailure.retryable((err as Error).message, 'FfmpegFailed');
  } finally {
    stop();
  }
}
