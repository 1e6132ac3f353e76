import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { parseEbur128Summary, parseLoudnorm, parseSilences, soundSpan, type LoudnormMeasurement } from '../engines/ffmpeg/ffmpeg-analysis';
import type { FfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import type { Storage } from '../engines/storage';
import { finalStep } from '../lib/download-plan';
import { editStep, LOUDNESS_TARGET, processingSteps } from '../lib/edit-plan';
import { FAILURE_TYPES, type JobOutput } from '../lib/jobs';
import type { DownloadFormat, Quality } from '../lib/operations';
import { assertClipWithin } from './failures';
import { keepAlive, progressReporter } from './heartbeat';
import { codecsOf, durationOf, probeDownloaded, roundMs, toolFailure } from './media-probe';

export interface DownloadDeps {
  ffmpeg: FfmpegEngine;
  storage: Storage;
}

export interface FinalizeDownloadInput {
  jobId: string;
  /** Downloaded file, relative to the job's work folder. */
  sourceFile: string;
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

  return {
    /** Remuxes or re-encodes the downloaded file into the requested format and measures the result. */
    async finalizeDownload(input: FinalizeDownloadInput): Promise<JobOutput> {
      const src = await storage.workFile(input.jobId, input.sourceFile);
      const probe = await probeDownloaded(ffmpeg, src);
      const codecs = codecsOf(probe);
      const wantsAudio = input.quality === 'audio' || input.format === 'mp3' || input.format === 'wav';
      if (wantsAudio && !codecs.acodec) {
        throw ApplicationFailure.nonRetryable('The source has no audio track to extract', FAILURE_TYPES.unavailable);
      }
      const step = finalStep(input.quality, input.format, codecs, path.extname(src).slice(1) || 'bin');
      const relative = storage.outputRelative(input.jobId, `output.${step.ext}`);
      const out = storage.outputPath(relative);
      await fs.mkdir(path.dirname(out), { recursive: true });
      if (step.outputOptions === null) {
        await fs.copyFile(src, out);
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
      const result = await ffmpeg.probe(out);
      const stat = await fs.stat(out);
      await storage.commitOutput(relative);
      return {
        outputFile: relative,
        resultData: { title: input.title, duration: roundMs(durationOf(result)), format: step.ext, filesize: stat.size },
      };
    },

    /**
     * Clip and/or audio processing of a download, in one activity: measuring passes over the audio
     * (noise floor for denoise; silences for trim_silence; loudnorm's first pass for normalize), then
     * one encode that cuts frame-accurately and applies the audio filters, then the output is measured.
     */
    async processDownload(input: ProcessDownloadInput): Promise<JobOutput> {
      const src = await storage.workFile(input.jobId, input.sourceFile);
      const probe = await probeDownloaded(ffmpeg, src);
      const sourceDuration = durationOf(probe);
      const codecs = codecsOf(probe);
      const steps = processingSteps(input.processing);
      const wantsAudio = input.quality === 'audio' || input.format === 'mp3' || input.format === 'wav';
      if ((wantsAudio || steps.length > 0) && !codecs.acodec) {
        throw ApplicationFailure.nonRetryable(
          steps.length > 0 ? `The source has no audio track, so ${steps.join(', ')} cannot be applied` : 'The source has no audio track to extract',
          FAILURE_TYPES.unavailable,
        );
      }
      let start = input.clipStart ?? 0;
      let end = input.clipEnd ?? sourceDuration;
      assertClipWithin(input.clipStart, input.clipEnd, sourceDuration);
      end = Math.min(end, sourceDuration);

      const signal = Context.current().cancellationSignal;
      const [from, to] = input.progressRange;
      const band = (a: number, b: number): [number, number] => [from + (to - from) * a, from + (to - from) * b];
      const window = (s: number, e: number) => [...(s > 0 ? ['-ss', s.toFixed(3)] : []), ...(e < sourceDuration ? ['-t', (e - s).toFixed(3)] : [])];
      const stop = keepAlive();
      try {
        // 1. denoise: afftdn needs the noise floor; the quietest 50 ms window is the background noise.
        const filters: string[] = [];
        if (steps.includes('denoise')) {
          const { log } = await ffmpeg.run({
            args: [...window(start, end), '-i', src, '-vn', '-sn', '-map', '0:a:0', '-af', 'astats=measure_perchannel=none:measure_overall=RMS_trough', '-f', 'null', '-'],
            durationHint: end - start,
            signal,
            onProgress: progressReporter(band(0, 0.15)),
          });
          const trough = Number(/RMS trough dB: (-?[\d.]+|-inf)/.exec(log)?.[1]);
          const floor = Number.isFinite(trough) ? Math.max(-80, Math.min(-20, Math.round(trough + 2))) : -80;
          filters.push(`afftdn=nr=30:nf=${floor}`);
        }

        // 2. one measuring pass for trim_silence (silencedetect) and normalize (loudnorm, first pass)
        let measured: LoudnormMeasurement | null = null;
        if (steps.includes('trim_silence') || steps.includes('normalize')) {
          const chain = [...filters];
          if (steps.includes('trim_silence')) chain.push('silencedetect=noise=-50dB:duration=0.1');
          if (steps.includes('normalize')) chain.push(`loudnorm=I=${LOUDNESS_TARGET.integrated}:TP=${LOUDNESS_TARGET.truePeak}:LRA=11:print_format=json`);
          const lines: string[] = [];
          const { log } = await ffmpeg.run({
            args: [...window(start, end), '-i', src, '-vn', '-sn', '-map', '0:a:0', '-af', chain.join(','), '-f', 'null', '-'],
            durationHint: end - start,
            signal,
            onProgress: progressReporter(band(0.15, 0.4)),
            onLogLine: (l) => l.includes('silence_') && lines.push(l),
          });
          if (steps.includes('trim_silence')) {
            const span = soundSpan(parseSilences(lines, end - start), end - start);
            // A source silent throughout is left as it is rather than cut to nothing.
            if (span) [start, end] = [start + span.start, start + span.end];
          }
          if (steps.includes('normalize')) {
            measured = parseLoudnorm(log);
            if (!measured) throw ApplicationFailure.nonRetryable('The audio is silent, so it cannot be normalized', FAILURE_TYPES.unavailable);
          }
        }
        if (measured) {
          // Linear (a single gain) when the measured range and peak allow it; loudnorm falls back to dynamic otherwise.
          const lra = Math.min(50, Math.max(11, Math.ceil(measured.input_lra + 1)));
          filters.push(
            `loudnorm=I=${LOUDNESS_TARGET.integrated}:TP=${LOUDNESS_TARGET.truePeak}:LRA=${lra}:measured_I=${measured.input_i}:measured_TP=${measured.input_tp}` +
              `:measured_LRA=${measured.input_lra}:measured_thresh=${measured.input_thresh}:offset=${measured.target_offset}:linear=true:print_format=json`,
          );
        }
        if (filters.length > 0) {
          // loudnorm works at 192 kHz: deliver the source's rate, and its channel layout (encoders such
          // as aac refuse the unset layout the filters otherwise hand on)
          const audio = probe.streams.find((s) => s.codec_type === 'audio');
          const rate = Number(audio?.sample_rate) || 48000;
          const layout = audio?.channel_layout || (audio?.channels === 1 ? 'mono' : 'stereo');
          filters.push(`aresample=${rate}`, `aformat=sample_rates=${rate}:channel_layouts=${layout}`);
        }

        // 3. the encode: -ss before -i with re-encoding decodes from the previous keyframe and drops
        // frames up to the exact time, so the cut is frame-accurate.
        const cut = start > 0 || end < sourceDuration - 0.001;
        const step = editStep(input.quality, input.format, codecs, path.extname(src).slice(1) || 'bin', cut);
        const relative = storage.outputRelative(input.jobId, `output.${step.ext}`);
        const out = storage.outputPath(relative);
        await fs.mkdir(path.dirname(out), { recursive: true });
        const { log } = await ffmpeg.run({
          args: [...window(start, end), '-i', src, '-y', ...step.outputOptions, ...(filters.length ? ['-af', filters.join(',')] : []), out],
          durationHint: end - start,
          signal,
          onProgress: progressReporter(band(0.4, measured ? 0.9 : 1)),
        });

        const resultData: Record<string, unknown> = {};
        if (measured) {
          const mode = /"normalization_type"\s*:\s*"(\w+)"/.exec(log.slice(log.lastIndexOf('[Parsed_loudnorm')))?.[1] ?? null;
          const after = await ffmpeg.run({ args: ['-i', out, '-vn', '-af', 'ebur128=peak=true', '-f', 'null', '-'], signal, onProgress: progressReporter(band(0.9, 1)) });
          const m = parseEbur128Summary(after.log);
          resultData.loudness = {
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
        const result = await ffmpeg.probe(out);
        const stat = await fs.stat(out);
        await storage.commitOutput(relative);
        return {
          outputFile: relative,
          resultData: { title: input.title, duration: roundMs(durationOf(result)), format: step.ext, filesize: stat.size, ...resultData },
        };
      } catch (err) {
        throw toolFailure(err);
      } finally {
        stop();
      }
    },

  };
}

export type DownloadActivities = ReturnType<typeof createDownloadActivities>;

