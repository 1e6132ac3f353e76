import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { parseEbur128Summary, parseLoudnorm, parseSilences, soundSpan, type LoudnormMeasurement } from '../../engines/ffmpeg/ffmpeg-analysis';
import type { FfmpegEngine, ProbeResult } from '../../engines/ffmpeg/ffmpeg.engine';
import { hasIndexInFront } from '../../engines/ffmpeg/mp4-index';
import type { Storage } from '../../engines/storage';
import {
  audioPass,
  deliveryFilters,
  denoiseFilter,
  editEncode,
  burnSubtitles,
  carriesSubtitles,
  editStep,
  embedSubtitles,
  finalStep,
  LOUDNESS_PROBE,
  mp4IsFinal,
  loudnessCheck,
  NOISE_PROBE,
  normalizationType,
  normalizeFilter,
  SILENCE_PROBE,
  timeWindow,
  type SubtitleInput,
} from '../../engines/ffmpeg/recipes/download';
import { clipCues, parseSubtitles, toSrt } from '../../engines/speech/subtitles';
import { iso639_2, languageName } from '../../engines/speech/languages';
import type { SubtitleTrack } from '../../activities/speech/subtitle-tracks';
import { LOUDNESS_TARGET, processingSteps } from '../../lib/download-plan';
import { clipChapters, ffmetadataChapters, type Chapter } from '../../lib/chapters';
import { JobFailure } from '../../lib/job-failure';
import type { JobOutput } from '../../lib/job-reports';
import type { DownloadFormat, Quality } from './spec';
import { assertClipWithin } from '../../activities/step/failures';
import { keepAlive, progressReporter } from '../../activities/step/heartbeat';
import { codecsOf, durationOf, probeDownloaded, roundMs, toolFailure } from '../../activities/step/media-probe';
import type { StepDeps } from '../step-deps';

export interface DownloadDeps {
  ffmpeg: FfmpegEngine;
  storage: Storage;
}

/** Subtitle tracks for a download (each a SubRip file of the whole source in the job's work folder), soft or burnt in. */
export interface DownloadSubtitles {
  mode: 'embed' | 'burn';
  tracks: SubtitleTrack[];
}

export interface FinalizeDownloadInput {
  jobId: string;
  /** Absent: none (and on jobs started before downloads carried subtitles). */
  subtitles?: DownloadSubtitles;
  /** Downloaded file, relative to the job's work folder. */
  sourceFile: string;
  /** ffprobe of sourceFile by the step that fetched it (absent: probed here, and on jobs started before it was passed). */
  sourceProbe?: ProbeResult;
  quality: Quality;
  format: DownloadFormat | null;
  title: string;
  progressRange: [number, number];
}

export interface ProcessDownloadInput extends FinalizeDownloadInput {
  /** Clip range in seconds of the source; null for its start / its end. */
  clipStart: number | null;
  clipEnd: number | null;
  /** Any of normalize, trim_silence, denoise. */
  processing: string[];
}

/** Turning a downloaded source into the delivered file (ffmpeg), on the `media-process` queue. */
export function createDownloadActivities(deps: DownloadDeps) {
  const { ffmpeg, storage } = deps;

  /** Runs of one step's ffmpeg passes, each within its share [a, b] of the step's progress range. */
  function ffmpegRun([from, to]: [number, number]): BandRun {
    const signal = Context.current().cancellationSignal;
    return async (args, durationHint, [a, b], onLogLine) =>
      (await ffmpeg.run({ args, durationHint, signal, onProgress: progressReporter([from + (to - from) * a, from + (to - from) * b]), onLogLine })).log;
  }

  /** The source's chapters cut to a clip, as a metadata file in the job's work folder; undefined when there are none or nothing is cut. */
  async function clippedChapters(jobId: string, chapters: Chapter[], start: number, end: number, sourceDuration: number): Promise<string | undefined> {
    if (!chapters.length || (start <= 0 && end >= sourceDuration - 0.001)) return undefined;
    const file = path.join(storage.workDirOf(jobId), 'chapters.ffmeta');
    await fs.writeFile(file, ffmetadataChapters(clipChapters(chapters, start, end)));
    return file;
  }

  /** When a file's picture starts on its timeline (seconds; 0 without video). */
  async function videoStart(file: string): Promise<number> {
    return videoStartOf(await ffmpeg.probe(file));
  }

  /**
   * The subtitle tracks put into the finished file: each cut to the span the download kept (shifted so
   * it starts at 0), then muxed in as soft tracks, or the one track burnt into the picture.
   */
  async function addSubtitles(jobId: string, out: string, ext: string, subtitles: DownloadSubtitles, [start, end]: [number, number], run: BandRun, shift: number): Promise<SubtitleTrack[]> {
    if (subtitles.mode === 'embed' && !carriesSubtitles(ext)) {
      throw JobFailure.user('rejected', `The download is ${ext}, which carries no subtitle tracks; ask for format mp4, mkv or webm`);
    }
    const dir = path.join(storage.workDirOf(jobId), 'subtitles');
    await fs.mkdir(dir, { recursive: true });
    const inputs: SubtitleInput[] = [];
    const kept: SubtitleTrack[] = [];
    for (const track of subtitles.tracks) {
      const parsed = parseSubtitles(await fs.readFile(await storage.workFile(jobId, track.file), 'utf8'));
      const cues = clipCues(parsed?.cues ?? [], start, end);
      // a track with nothing said in what the download kept is left out rather than written empty
      if (!cues.length) continue;
      const file = path.join(dir, `${track.language}.cut.srt`);
      await fs.writeFile(file, toSrt(cues));
      inputs.push({ file, language: iso639_2(track.language), title: languageName(track.language), offset: shift });
      kept.push(track);
    }
    if (!inputs.length) return [];
    const done = `${out}.subtitled.${ext}`;
    const args = subtitles.mode === 'burn' ? burnSubtitles(out, ext, inputs[0]!, done) : embedSubtitles(out, ext, inputs, done);
    await run(args, end - start, [0.95, 1]);
    await fs.rename(done, out);
    return kept;
  }

  return {
    /** Remuxes or re-encodes the downloaded file into the requested format and measures the result. */
    async finalizeDownload(input: FinalizeDownloadInput): Promise<JobOutput> {
      const src = await storage.workFile(input.jobId, input.sourceFile);
      const probe = input.sourceProbe ?? (await probeDownloaded(ffmpeg, src));
      const codecs = codecsOf(probe);
      assertAudioFor(input, [], codecs);
      const ext = path.extname(src).slice(1) || 'bin';
      const finalMp4 = input.format === 'mp4' && ext === 'mp4' && mp4IsFinal(probe.streams, await hasIndexInFront(src));
      const step = finalStep(input.quality, input.format, codecs, ext, finalMp4);
      const relative = storage.outputRelative(input.jobId, `output.${step.ext}`);
      const out = storage.outputPath(relative);
      await fs.mkdir(path.dirname(out), { recursive: true });
      if (step.outputOptions === null) {
        // the fetched file is the output: a second name for it rather than a second copy of it on disk
        await fs.rm(out, { force: true }); // a retry's: never copy the file onto a name of itself
        await fs.link(src, out).catch(() => fs.copyFile(src, out));
      } else {
        const stop = keepAlive();
        try {
          await ffmpeg.transcode({
            input: src,
            output: out,
            outputOptions: step.outputOptions,
            durationHint: probe.format.duration ?? null,
            signal: Context.current().cancellationSignal,
            onProgress: progressReporter(input.progressRange),
          });
        } catch (err) {
          throw toolFailure(err);
        } finally {
          stop();
        }
      }
      // the cues follow the source's picture: a remux that moves the video's first frame moves them with it
      const tracks = input.subtitles ? await addSubtitles(input.jobId, out, step.ext, input.subtitles, [0, durationOf(probe)], ffmpegRun(input.progressRange), (await videoStart(out)) - videoStartOf(probe)) : null;
      // a second name of the fetched file, with nothing added, is what was probed
      const result = step.outputOptions === null && !tracks ? probe : await ffmpeg.probe(out);
      const stat = await fs.stat(out);
      await storage.commitOutput(relative);
      return {
        outputFile: relative,
        resultData: { title: input.title, duration: roundMs(durationOf(result)), format: step.ext, filesize: stat.size, ...subtitlesResult(tracks) },
      };
    },

    /**
     * Clip and/or audio processing of a download, in one activity: measuring passes over the audio
     * (noise floor for denoise; silences for trim_silence; loudnorm's first pass for normalize), then
     * one encode that cuts frame-accurately and applies the audio filters, then the output is measured.
     */
    async processDownload(input: ProcessDownloadInput): Promise<JobOutput> {
      const src = await storage.workFile(input.jobId, input.sourceFile);
      const probe = input.sourceProbe ?? (await probeDownloaded(ffmpeg, src));
      const sourceDuration = durationOf(probe);
      const steps = processingSteps(input.processing);
      assertAudioFor(input, steps, codecsOf(probe));
      assertClipWithin(input.clipStart, input.clipEnd, sourceDuration);
      const run = ffmpegRun(input.progressRange);
      const stop = keepAlive();
      try {
        const audio = await planAudio(src, steps, [input.clipStart ?? 0, Math.min(input.clipEnd ?? sourceDuration, sourceDuration)], sourceDuration, run);
        if (audio.filters.length) audio.filters.push(...deliveryFilters(probe.streams.find((s) => s.codec_type === 'audio')));
        const [start, end] = audio.span;
        const step = editStep(input.quality, input.format, codecsOf(probe), path.extname(src).slice(1) || 'bin', start > 0 || end < sourceDuration - 0.001);
        const relative = storage.outputRelative(input.jobId, `output.${step.ext}`);
        const out = storage.outputPath(relative);
        await fs.mkdir(path.dirname(out), { recursive: true });
        const chaptersFile = await clippedChapters(input.jobId, probe.chapters ?? [], start, end, sourceDuration);
        const encoded = await run(editEncode(timeWindow(start, end, sourceDuration), src, step, audio.filters, out, chaptersFile), end - start, [0.4, audio.measured ? 0.9 : 1]);
        const loudness = audio.measured ? await loudnessOf(out, audio.measured, normalizationType(encoded), run) : undefined;
        // the cut's first frame is the source's at `start`, wherever the encode put it
        const tracks = input.subtitles ? await addSubtitles(input.jobId, out, step.ext, input.subtitles, [start, end], run, await videoStart(out)) : null;
        const result = await ffmpeg.probe(out);
        const stat = await fs.stat(out);
        await storage.commitOutput(relative);
        return { outputFile: relative, resultData: { title: input.title, duration: roundMs(durationOf(result)), format: step.ext, filesize: stat.size, ...(loudness ? { loudness } : {}), ...subtitlesResult(tracks) } };
      } catch (err) {
        throw toolFailure(err);
      } finally {
        stop();
      }
    },
  };
}

export type DownloadActivities = ReturnType<typeof createDownloadActivities>;

function videoStartOf(probe: ProbeResult): number {
  const start = Number((probe.streams.find((s) => s.codec_type === 'video') as { start_time?: string } | undefined)?.start_time);
  return Number.isFinite(start) ? start : 0;
}

/** result_data.subtitles: each track in the file, in order, and where it came from. */
function subtitlesResult(tracks: SubtitleTrack[] | null) {
  return tracks ? { subtitles: tracks.map((t) => ({ language: t.language, source: t.source })) } : {};
}

/** An ffmpeg run within a share of the step's progress band; resolves with its log. */
type BandRun = (args: string[], durationHint: number | undefined, band: [number, number], onLogLine?: (line: string) => void) => Promise<string>;

/** What an edit does to the audio: its filters, the span it keeps (after trim_silence), loudnorm's first-pass figures. */
interface AudioPlan {
  filters: string[];
  span: [number, number];
  measured: LoudnormMeasurement | null;
}

function assertAudioFor(input: { quality: Quality; format: DownloadFormat | null }, steps: string[], codecs: { acodec: string | null }): void {
  if (codecs.acodec) return;
  const wantsAudio = input.quality === 'audio' || input.format === 'mp3' || input.format === 'wav';
  if (steps.length > 0) throw JobFailure.user('unavailable', `The source has no audio track, so ${steps.join(', ')} cannot be applied`);
  if (wantsAudio) throw JobFailure.user('unavailable', 'The source has no audio track to extract');
}

/** The measuring passes: the noise floor for denoise, then one pass for trim_silence (silences) and normalize (loudnorm's first pass). */
async function planAudio(src: string, steps: string[], span: [number, number], sourceDuration: number, run: BandRun): Promise<AudioPlan> {
  let [start, end] = span;
  const filters: string[] = [];
  if (steps.includes('denoise')) filters.push(denoiseFilter(await run(audioPass(timeWindow(start, end, sourceDuration), src, [NOISE_PROBE]), end - start, [0, 0.15])));
  if (!steps.includes('trim_silence') && !steps.includes('normalize')) return { filters, span: [start, end], measured: null };
  const chain = [...filters, ...(steps.includes('trim_silence') ? [SILENCE_PROBE] : []), ...(steps.includes('normalize') ? [LOUDNESS_PROBE] : [])];
  const silences: string[] = [];
  const log = await run(audioPass(timeWindow(start, end, sourceDuration), src, chain), end - start, [0.15, 0.4], (l) => l.includes('silence_') && silences.push(l));
  if (steps.includes('trim_silence')) {
    const sound = soundSpan(parseSilences(silences, end - start), end - start);
    // A source silent throughout is left as it is rather than cut to nothing.
    if (sound) [start, end] = [start + sound.start, start + sound.end];
  }
  if (!steps.includes('normalize')) return { filters, span: [start, end], measured: null };
  const measured = parseLoudnorm(log);
  if (!measured) throw JobFailure.user('unavailable', 'The audio is silent, so it cannot be normalized');
  return { filters: [...filters, normalizeFilter(measured)], span: [start, end], measured };
}

/** result_data.loudness: the first pass's figures beside the delivered file's, measured again. */
async function loudnessOf(out: string, measured: LoudnormMeasurement, mode: string | null, run: BandRun) {
  const m = parseEbur128Summary(await run(loudnessCheck(out), undefined, [0.9, 1]));
  return {
    target_i: LOUDNESS_TARGET.integrated,
    input_i: measured.input_i,
    input_tp: measured.input_tp,
    input_lra: measured.input_lra,
    output_i: m?.integrated ?? null,
    output_tp: m?.truePeak ?? null,
    output_lra: m?.lra ?? null,
    normalization_type: mode,
  };
}

/** The download's own steps, as its worker builds them. */
export const downloadSteps = ({ ffmpeg, storage }: StepDeps) => createDownloadActivities({ ffmpeg, storage });
