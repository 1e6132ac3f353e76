// A plain audio/video file at a URL: no extractor. Read in place when its origin serves ranges, else
// streamed to disk by Node (same address rule and size limit), saving a yt-dlp process start per job.
import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { DirectMediaError, downloadDirectMedia, type DirectMedia } from '../../engines/direct-media';
import { EgressRefusedError } from '../../engines/egress/address-check';
import type { ProbeResult } from '../../engines/ffmpeg/ffmpeg.engine';
import { audioTrackCopyRecipe } from '../../engines/ffmpeg/recipes/audio';
import { JobFailure } from '../../lib/job-failure';
import { tooLargeMessage, tooLongMessage, type SourceLimits } from '../../lib/plans';
import { refusalFailure, throughEgress } from '../step/egress-run';
import { assertClipWithin } from '../step/failures';
import { alive, keepAlive, progressReporter } from '../step/heartbeat';
import { unreadableMedia } from '../step/media-probe';
import { watchDownload } from './download-watch';
import { byteRangesOf, indexProbe } from './in-place';
import { directTitle, downloadFolder, fileNameOf, overLimit, withinLimits } from './source-facts';
import type { DownloadSourceInput, FetchedSource, ResolvedSource, ResolveSourceInput, SourceDeps } from './types';

type DirectDeps = Pick<SourceDeps, 'ffmpeg' | 'storage' | 'egress' | 'config'>;

/** Streams the file into the job's work folder (heartbeats, cancellation, size limit) and checks its duration with ffprobe. */
export async function fetchDirectFile(deps: DirectDeps, input: DownloadSourceInput, limits: SourceLimits, length: number | null): Promise<FetchedSource & { sourceProbe: ProbeResult }> {
  const { ffmpeg, storage, config } = deps;
  if (length !== null && length > limits.maxBytes) throw overLimit(tooLargeMessage(limits, length));
  const workDir = storage.workDirOf(input.jobId);
  const ext = (path.extname(fileNameOf(input.url)).slice(1).replace(/[^A-Za-z0-9]/g, '') || 'media').toLowerCase();
  const file = path.join(downloadFolder(workDir, input.slot), `source.${ext}`);
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
    if (err instanceof DirectMediaError && err.status === 429) throw JobFailure.refused('The platform is refusing requests from this service for now (too many requests)');
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
 * A speech job's file at a URL, keeping only its first audio track: ffmpeg copies the track (no
 * decoding) as it reads the URL through the egress proxy. An hour of 720p video is 266 MB, its audio
 * 45 MB: the job's disk and the hand-off to the speech step shrink by the picture. Null when the file
 * should be fetched whole instead: it is served as audio (nothing to drop), its length is unknown
 * (the size limit is checked against it), or ffmpeg could not read it (no audio track, an origin
 * that ignores ranges with the index at the end).
 */
export async function fetchDirectAudio(deps: DirectDeps, input: DownloadSourceInput, limits: SourceLimits, media: DirectMedia): Promise<FetchedSource | null> {
  const { ffmpeg, storage, egress } = deps;
  const { length } = media;
  if (length === null || !egress || /^audio\//i.test(media.contentType)) return null;
  if (length > limits.maxBytes) throw overLimit(tooLargeMessage(limits, length));
  const workDir = storage.workDirOf(input.jobId);
  const file = path.join(downloadFolder(workDir, input.slot), 'source.mka');
  await fs.mkdir(path.dirname(file), { recursive: true });
  const signal = Context.current().cancellationSignal;
  const watch = watchDownload(path.dirname(file), limits, ffmpeg, signal);
  try {
    await throughEgress(egress, input.url, (proxyUrl) => alive(() => ffmpeg.run({ args: audioTrackCopyRecipe(input.url, file), proxyUrl, signal: watch.signal })));
  } catch (err) {
    const over = watch.exceeded();
    if (over) throw overLimit(over.message);
    // a cancel, and the egress proxy's own failures (a refused or unreachable host), are the job's
    if (signal.aborted || err instanceof ApplicationFailure) throw err;
    if (err instanceof EgressRefusedError) throw refusalFailure(err);
    // the whole file is fetched instead, where its real problem (if any) shows
    await fs.rm(file, { force: true });
    return null;
  } finally {
    watch.stop();
  }
  const probe = await ffmpeg.probe(file).catch(() => null);
  const duration = probe?.format.duration ?? null;
  if (!probe?.streams.some((s) => s.codec_type === 'audio') || duration === null) {
    await fs.rm(file, { force: true });
    return null;
  }
  if (duration > limits.maxSeconds) throw overLimit(tooLongMessage(limits, duration));
  progressReporter(input.progressRange)(1);
  return { sourceFile: path.relative(workDir, file), title: directTitle(input.url), duration };
}

/** Read in place (measured from its MP4 index, or by ffprobe through the egress proxy) when its origin serves ranges and the job reads part of it; else fetched whole. */
export async function openDirectFile(deps: DirectDeps, input: ResolveSourceInput, limits: SourceLimits, length: number | null): Promise<ResolvedSource> {
  const { ffmpeg, egress, config } = deps;
  const signal = Context.current().cancellationSignal;
  const ranges = input.reads === 'whole' ? null : await byteRangesOf(input.url, config.allowPrivateNetwork);
  // an MP4's index says what the steps need; ffprobe reads every other container
  const probed = ranges && ((await indexProbe(ranges, config.allowPrivateNetwork, {})) ?? (await alive(() => throughEgress(egress, input.url, (proxyUrl) => ffmpeg.probe(input.url, { proxyUrl, signal, seekable: true }).catch(() => null)))));
  // a file ffprobe cannot read in place is downloaded and read again, where its real problem shows
  if (!probed?.streams.some((x) => x.codec_type === 'video' || x.codec_type === 'audio')) {
    const fetched = await fetchDirectFile(deps, input, limits, length);
    assertClipWithin(input.clipStart, input.clipEnd, fetched.duration);
    return { ...fetched, media: null };
  }
  const duration = probed.format.duration ?? null;
  const size = length ?? probed.format.size ?? null;
  withinLimits(config, { id: '', duration, filesize: size }, limits);
  assertClipWithin(input.clipStart, input.clipEnd, duration);
  return { title: directTitle(input.url), duration, sourceFile: null, media: { url: input.url, headers: {}, probe: probed, maxBytes: limits.maxBytes } };
}
