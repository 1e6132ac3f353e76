import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { FfmpegEngine, ProbeResult } from '../engines/ffmpeg.engine';
import { finalStep } from '../lib/download-plan';
import { FAILURE_TYPES, type DownloadFormat, type JobOutput, type Quality } from '../lib/job.types';
import type { Storage } from '../lib/storage';
import { keepAlive, progressReporter } from './heartbeat';

export interface ProcessDeps {
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

/** ffmpeg activities for the `media-process` queue. */
export function createProcessActivities(deps: ProcessDeps) {
  const { ffmpeg, storage } = deps;

  return {
    /** Remuxes or re-encodes the downloaded file into the requested format and measures the result. */
    async finalizeDownload(input: FinalizeDownloadInput): Promise<JobOutput> {
      const src = path.join(storage.workDirOf(input.jobId), input.sourceFile);
      const probe = await ffmpeg.probe(src).catch((e: Error) => {
        throw ApplicationFailure.nonRetryable(`The downloaded file is not readable media: ${e.message}`, FAILURE_TYPES.unavailable);
      });
      const codecs = {
        vcodec: probe.streams.find((s) => s.codec_type === 'video' && !isCoverArt(s))?.codec_name ?? null,
        acodec: probe.streams.find((s) => s.codec_type === 'audio')?.codec_name ?? null,
      };
      const wantsAudio = input.quality === 'audio' || input.format === 'mp3' || input.format === 'wav';
      if (wantsAudio && !codecs.acodec) {
        throw ApplicationFailure.nonRetryable('The source has no audio track to extract', FAILURE_TYPES.unavailable);
      }
      const step = finalStep(input.quality, input.format, codecs, path.extname(src).slice(1) || 'bin');
      const relative = storage.outputRelative(input.jobId, `output.${step.ext}`);
      const out = storage.filePath(relative);
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
        } finally {
          stop();
        }
      }
      const result = await ffmpeg.probe(out);
      const stat = await fs.stat(out);
      return {
        outputFile: relative,
        resultData: {
          title: input.title,
          duration: roundMs(result.format.duration ?? durationOf(result)),
          format: step.ext,
          filesize: stat.size,
        },
      };
    },
  };
}

export type ProcessActivities = ReturnType<typeof createProcessActivities>;

export function isCoverArt(s: { codec_name?: string; nb_frames?: string }): boolean {
  return (s.codec_name === 'mjpeg' || s.codec_name === 'png') && (s.nb_frames === '1' || s.nb_frames === undefined);
}

export function durationOf(p: ProbeResult): number {
  return Math.max(0, ...p.streams.map((s) => Number(s.duration) || 0));
}

export function roundMs(n: number): number {
  return Math.round(n * 1000) / 1000;
}
