import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { DirectMediaError, downloadDirectMedia } from '../../engines/direct-media';
import { EgressRefusedError } from '../../engines/egress/address-check';
import type { EgressProxy } from '../../engines/egress/egress-proxy';
import type { FfmpegEngine, FfmpegRunRequest, ProbeResult, ProbeStream } from '../../engines/ffmpeg/ffmpeg.engine';
import { httpHeaderOptions } from '../../engines/ffmpeg/input-policy';
import type { Storage } from '../../engines/storage';
import type { Config } from '../../lib/config';
import { JobFailure } from '../../lib/job-failure';
import { log } from '../../lib/logger';
import { formatBytes } from '../../lib/plans';
import { refusalFailure, throughEgress } from '../step/egress-run';
import { alive, progressReporter } from '../step/heartbeat';
import { durationOf, probeDownloaded, roundMs, toolFailure, videoStreamOf } from '../step/media-probe';

/**
 * A source read in place over http(s) instead of downloaded: jobs that need one frame or a short
 * window seek in it, so only those bytes are fetched. Every request goes through the egress proxy.
 */
export interface RemoteMedia {
  url: string;
  /** Request headers the platform wants (yt-dlp's http_headers); empty for a plain file. */
  headers: Record<string, string>;
  /** The URL's ffprobe, or its fields read from an MP4 index, when the fetch step measured it (saves a probe here). */
  probe: ProbeResult | null;
  /** The job's size limit, for a download when reading in place fails (absent: the service's own). */
  maxBytes?: number;
}

/** Where a processing step reads its source: a downloaded file (relative to the job's work folder), or a URL. */
export interface SourceRef {
  sourceFile: string | null;
  media?: RemoteMedia | null;
  /** ffprobe of sourceFile when the fetch step made one (saves a second one here). */
  sourceProbe?: ProbeResult | null;
}

/** Reads a tool's standard output as it streams (see FfmpegRunRequest.consumeStdout). */
export type ConsumeStdout = NonNullable<FfmpegRunRequest['consumeStdout']>;

/** Where a run's progress goes: the share of the job's progress it covers, or a callback taking its fraction done (runs in parallel sum theirs). */
export type RunProgress = [number, number] | ((fraction: number) => void);

/** A source ready for ffmpeg: its input options (`… -i X`) and how to run ffmpeg on it. */
export interface VideoInput {
  /** `-ss`-style options go before these; the result ends with `-i <file or URL>`. */
  input(before?: string[]): string[];
  /** An ffmpeg run over this input, through the egress proxy when it is a URL; with consumeStdout its output (`pipe:1`) streams to the caller. */
  run(args: string[], durationHint: number, progress: RunProgress, consumeStdout?: ConsumeStdout): Promise<{ log: string; progress: Record<string, string> }>;
}

/** A processing step's opened source. */
export interface OpenedSource extends VideoInput {
  /** A URL read in place: every `-i` of it opens the URL again and reads ahead over the network. */
  remote: boolean;
  probe(): Promise<ProbeResult>;
  /**
   * The failure for a step that read its source and got nothing usable (no frame, say): on a
   * local file the job's failure, on a URL a failed seek read, so the step runs again on a download.
   */
  unreadable(message: string): Error;
}

/** What a step needs to read its source: ffmpeg, the egress proxy for URLs, and the limits a fallback download keeps. */
export interface SourceReadDeps {
  ffmpeg: FfmpegEngine;
  egress?: EgressProxy;
  limits: Pick<Config, 'allowPrivateNetwork' | 'maxSourceBytes'>;
}

/** A seek read of a source URL that failed: the caller downloads the source and tries again. */
class SeekReadError extends Error {}

/**
 * Runs a processing step on its source. A source read in place (seek reads through the egress
 * proxy) whose read fails for any reason but a refused address or a cancellation is downloaded
 * into the job's work folder, and the step runs again on that copy: an origin whose ranges or
 * index defeat seeking costs a download, never the job. The step must be safe to run twice.
 */
export async function withSource<T>(deps: SourceReadDeps, storage: Storage, jobId: string, ref: SourceRef, step: (src: OpenedSource) => Promise<T>): Promise<T> {
  const media = ref.media ?? null;
  const workDir = storage.workDirOf(jobId);
  if (!media) {
    if (!ref.sourceFile) throw JobFailure.internal('The step has no source to read');
    return step(localSource(deps.ffmpeg, await storage.workFile(jobId, ref.sourceFile), ref.sourceProbe ?? null));
  }
  const { egress } = deps;
  if (!egress) throw JobFailure.internal('Reading a source URL needs the egress proxy on this worker');
  try {
    return await step(remoteSource(deps.ffmpeg, egress, media));
  } catch (err) {
    if (!(err instanceof SeekReadError)) throw err;
    log.info({ job_id: Context.current().info.workflowExecution?.workflowId, reason: err.message }, 'seek read failed: downloading the source');
    return step(localSource(deps.ffmpeg, await downloadMedia(deps.limits, workDir, media)));
  }
}

function localSource(ffmpeg: FfmpegEngine, file: string, probed: ProbeResult | null = null): OpenedSource {
  return {
    remote: false,
    input: (before = []) => [...before, '-i', file],
    run: (args, hint, range, consume) => runFfmpegStep(ffmpeg, args, hint, range, consume),
    probe: async () => probed ?? (await probeDownloaded(ffmpeg, file)),
    unreadable: (message) => JobFailure.user('unavailable', message),
  };
}

function remoteSource(ffmpeg: FfmpegEngine, egress: EgressProxy, media: RemoteMedia): OpenedSource {
  const headers = httpHeaderOptions(media.headers);
  const signal = Context.current().cancellationSignal;
  /** A refusal, an unreachable host and a cancellation stay what they are; anything else is a failed seek read. */
  const seekRead = async <T>(read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (err) {
      // throughEgress's own failures (a refused or unreachable host) are the job's; a tool's error is the read's
      if (signal.aborted || err instanceof ApplicationFailure) throw err;
      throw new SeekReadError((err as Error).message);
    }
  };
  return {
    remote: true,
    input: (before = []) => [...before, ...headers, '-i', media.url],
    run: (args, hint, range, consume) => seekRead(() => throughEgress(egress, media.url, (proxyUrl) => runTool(ffmpeg, args, hint, range, proxyUrl, consume))),
    probe: async () => media.probe ?? (await seekRead(() => alive(() => throughEgress(egress, media.url, (proxyUrl) => ffmpeg.probe(media.url, { proxyUrl, headers: media.headers, signal, seekable: true }))))),
    unreadable: (message) => new SeekReadError(message),
  };
}

/** The source URL streamed whole into the job's work folder (same address rule and size limit as any source download). */
async function downloadMedia(limits: SourceReadDeps['limits'], workDir: string, media: RemoteMedia): Promise<string> {
  const ext = (path.extname(new URL(media.url).pathname).slice(1).replace(/[^A-Za-z0-9]/g, '') || 'media').toLowerCase();
  const file = path.join(workDir, 'download', `source.${ext}`);
  await fs.mkdir(path.dirname(file), { recursive: true });
  try {
    await alive(() => downloadDirectMedia(media.url, file, { allowPrivate: limits.allowPrivateNetwork, maxBytes: media.maxBytes ?? limits.maxSourceBytes, headers: media.headers, signal: Context.current().cancellationSignal }));
  } catch (err) {
    if (err instanceof EgressRefusedError) throw refusalFailure(err);
    if (err instanceof DirectMediaError && err.reason === 'too_large') throw JobFailure.user('rejected', `The source is larger than ${formatBytes(media.maxBytes ?? limits.maxSourceBytes)}, the limit of this job`);
    throw JobFailure.tool('download', `Downloading the source failed: ${(err as Error).message}`);
  }
  return file;
}

/** The source's first real video stream and duration; fails the job when there is none. */
export async function videoSource(ffmpeg: FfmpegEngine, file: string): Promise<{ probe: ProbeResult; video: ProbeStream; duration: number }> {
  return videoOf(await probeDownloaded(ffmpeg, file));
}

/** The first real video stream and the duration of a probed source; fails the job when there is none. */
export function videoOf(probe: ProbeResult): { probe: ProbeResult; video: ProbeStream; duration: number } {
  const video = videoStreamOf(probe);
  if (!video) throw JobFailure.user('unavailable', 'The source has no video track to take frames from');
  const duration = durationOf(probe);
  if (!(duration > 0)) throw JobFailure.user('unavailable', 'The source has no measurable duration');
  return { probe, video, duration };
}

/** Fails the job (not retried, refunded): a requested time lies at or past the end of the source. */
export function pastEnd(field: string, at: number, duration: number): never {
  throw JobFailure.user('rejected', `${field} (${roundMs(at)} s) is past the end of the source, which is ${roundMs(duration)} s long`);
}

/** One ffmpeg run with heartbeats and cancellation; a failure is described in the source's terms (see toolFailure). */
export async function runFfmpegStep(ffmpeg: FfmpegEngine, args: string[], durationHint: number, range: RunProgress, consumeStdout?: ConsumeStdout) {
  try {
    return await runTool(ffmpeg, args, durationHint, range, undefined, consumeStdout);
  } catch (err) {
    throw toolFailure(err);
  }
}

/** One ffmpeg run with heartbeats and cancellation; rejects with the tool's own error. */
async function runTool(ffmpeg: FfmpegEngine, args: string[], durationHint: number, range: RunProgress, proxyUrl?: string, consumeStdout?: ConsumeStdout) {
  const onProgress = typeof range === 'function' ? range : progressReporter(range);
  return alive(() => ffmpeg.run({ args, proxyUrl, durationHint, signal: Context.current().cancellationSignal, onProgress, consumeStdout }));
}
