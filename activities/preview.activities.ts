import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { FfmpegEngine, ProbeResult, ProbeStream } from '../engines/ffmpeg.engine';
import { imageHashes, type HashSize } from '../engines/image-hash';
import { FAILURE_TYPES, type JobOutput, type PreviewParams } from '../lib/job.types';
import type { Storage } from '../lib/storage';
import { formatTimestamp, parseTimeString } from '../lib/time';
import { keepAlive, progressReporter } from './heartbeat';
import { durationOf, isCoverArt, roundMs } from './process.activities';

export interface PreviewDeps {
  ffmpeg: FfmpegEngine;
  storage: Storage;
}

export interface MakePreviewInput {
  jobId: string;
  /** Downloaded file, relative to the job's work folder. */
  sourceFile: string;
  params: PreviewParams;
  progressRange: [number, number];
}

export interface FingerprintFrameInput {
  jobId: string;
  sourceFile: string;
  title: string;
  /** Seconds; null for 25% of the duration. */
  timestamp: number | null;
  hashSize: HashSize;
  progressRange: [number, number];
}

/** Previews (ffmpeg) and perceptual fingerprints (sharp) for the `media-process` queue. */
export function createPreviewActivities(deps: PreviewDeps) {
  const { ffmpeg, storage } = deps;

  /** The source's first real video stream and duration; fails the job when there is none. */
  async function videoSource(file: string): Promise<{ probe: ProbeResult; video: ProbeStream; duration: number }> {
    const probe = await ffmpeg.probe(file).catch((e: Error) => {
      throw ApplicationFailure.nonRetryable(`The downloaded file is not readable media: ${e.message}`, FAILURE_TYPES.unavailable);
    });
    const video = probe.streams.find((s) => s.codec_type === 'video' && !isCoverArt(s));
    if (!video) throw ApplicationFailure.nonRetryable('The source has no video track to take frames from', FAILURE_TYPES.unavailable);
    const duration = probe.format.duration ?? durationOf(probe);
    if (!(duration > 0)) throw ApplicationFailure.nonRetryable('The source has no measurable duration', FAILURE_TYPES.unavailable);
    return { probe, video, duration };
  }

  function pastEnd(field: string, at: number, duration: number): never {
    throw ApplicationFailure.nonRetryable(
      `${field} (${roundMs(at)} s) is past the end of the source, which is ${roundMs(duration)} s long`,
      FAILURE_TYPES.rejected,
    );
  }

  /** Runs one ffmpeg command with heartbeats, turning tool failures into retryable activity failures. */
  async function runFfmpeg(args: string[], durationHint: number, range: [number, number]) {
    const stop = keepAlive();
    try {
      return await ffmpeg.run({ args, durationHint, signal: Context.current().cancellationSignal, onProgress: progressReporter(range) });
    } catch (err) {
      throw ApplicationFailure.retryable((err as Error).message, 'FfmpegFailed');
    } finally {
      stop();
    }
  }

  /** Frames in a file, counted by decoding it. */
  async function countFrames(file: string): Promise<number> {
    const { progress } = await ffmpeg.run({ args: ['-i', file, '-map', '0:v:0', '-f', 'null', '-'], signal: Context.current().cancellationSignal });
    return Number(progress.frame ?? 0);
  }

  return {
    /** gif, thumbnail, mosaic or clip; result_data is measured from the output file. */
    async makePreview(input: MakePreviewInput): Promise<JobOutput> {
      const p = input.params;
      const src = path.join(storage.workDirOf(input.jobId), input.sourceFile);
      const { probe, duration } = await videoSource(src);
      const width = p.width;
      const ext = p.preview_type === 'gif' ? 'gif' : p.preview_type === 'clip' ? 'mp4' : 'jpg';
      const relative = storage.outputRelative(input.jobId, `preview.${ext}`);
      const out = storage.filePath(relative);
      await fs.mkdir(path.dirname(out), { recursive: true });
      await fs.rm(out, { force: true }); // a retry must not measure an earlier attempt's file
      const at = (v: string | null, fallback: number) => (v === null ? fallback : (parseTimeString(v) ?? fallback));

      switch (p.preview_type) {
        case 'gif': {
          const start = at(p.start, 0);
          if (start >= duration) pastEnd('start', start, duration);
          const len = Math.min(p.duration ?? 5, duration - start);
          const graph = `[0:v:0]fps=${p.fps ?? 10},scale=${width}:-1:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[pal];[b][pal]paletteuse=dither=bayer:bayer_scale=5`;
          await runFfmpeg(['-ss', start.toFixed(3), '-t', len.toFixed(3), '-i', src, '-filter_complex', graph, '-loop', '0', '-y', out], len, input.progressRange);
          break;
        }
        case 'thumbnail': {
          const t = at(p.timestamp, duration * 0.25);
          if (t >= duration) pastEnd('timestamp', t, duration);
          const args = ['-ss', t.toFixed(3), '-i', src, '-map', '0:v:0', '-frames:v', '1', '-vf', `scale=${width}:-1:flags=lanczos`, '-q:v', '2', '-update', '1'];
          await runFfmpeg([...args, '-f', 'image2', '-c:v', 'mjpeg', '-y', out], 1, input.progressRange);
          break;
        }
        case 'mosaic': {
          const columns = p.columns ?? 4;
          const rows = p.rows ?? 4;
          const n = columns * rows;
          // n evenly spaced frames: the middle of each of n equal parts of the source
          const tileWidth = Math.ceil(width / columns);
          const vf = `fps=${n}/${duration.toFixed(6)},scale=${tileWidth}:-1:flags=lanczos,tile=${columns}x${rows},scale=${width}:-1:flags=lanczos`;
          const args = ['-ss', (duration / (2 * n)).toFixed(3), '-i', src, '-map', '0:v:0', '-vf', vf, '-frames:v', '1', '-q:v', '2', '-update', '1'];
          await runFfmpeg([...args, '-f', 'image2', '-c:v', 'mjpeg', '-y', out], duration, input.progressRange);
          break;
        }
        case 'clip': {
          const start = at(p.start, 0);
          if (start >= duration) pastEnd('start', start, duration);
          const len = Math.min(p.duration ?? 10, duration - start);
          const even = width - (width % 2); // H.264 in 4:2:0 needs even dimensions
          const hasAudio = probe.streams.some((s) => s.codec_type === 'audio');
          const args = ['-ss', start.toFixed(3), '-t', len.toFixed(3), '-i', src, '-map', '0:v:0', ...(hasAudio ? ['-map', '0:a:0'] : [])];
          args.push('-vf', `scale=${even}:-2:flags=lanczos`, '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p');
          if (hasAudio) args.push('-c:a', 'aac', '-b:a', '128k');
          await runFfmpeg([...args, '-movflags', '+faststart', '-y', out], len, input.progressRange);
          break;
        }
      }

      const result = await ffmpeg.probe(out).catch(() => null);
      const stream = result?.streams.find((s) => s.codec_type === 'video');
      if (!result || !stream?.width || !stream.height) {
        throw ApplicationFailure.nonRetryable('No frame could be taken from the source at that time', FAILURE_TYPES.unavailable);
      }
      let outDuration = 0;
      let fps = 0;
      if (p.preview_type === 'gif' || p.preview_type === 'clip') {
        outDuration = roundMs(result.format.duration ?? durationOf(result));
        const frames = await countFrames(out);
        fps = outDuration > 0 ? Math.round(frames / outDuration) : 0;
      }
      return {
        outputFile: relative,
        resultData: {
          preview_type: p.preview_type,
          width: stream.width,
          height: stream.height,
          duration: outDuration,
          fps,
          filesize: (await fs.stat(out)).size,
        },
      };
    },

    /** average, perceptual and difference hash of one frame (imagehash's definitions and hex layout). */
    async fingerprintFrame(input: FingerprintFrameInput): Promise<JobOutput> {
      const src = path.join(storage.workDirOf(input.jobId), input.sourceFile);
      const { duration } = await videoSource(src);
      const t = input.timestamp ?? duration * 0.25;
      if (t >= duration) pastEnd('timestamp', t, duration);
      const frame = path.join(storage.workDirOf(input.jobId), 'frame.png');
      await fs.rm(frame, { force: true });
      const args = ['-ss', t.toFixed(3), '-i', src, '-map', '0:v:0', '-frames:v', '1', '-update', '1', '-pix_fmt', 'rgb24', '-f', 'image2', '-c:v', 'png', '-y', frame];
      await runFfmpeg(args, 1, [input.progressRange[0], (input.progressRange[0] + input.progressRange[1]) / 2]);
      const png = await fs.readFile(frame).catch(() => {
        throw ApplicationFailure.nonRetryable('No frame could be taken from the source at that time', FAILURE_TYPES.unavailable);
      });
      const hashes = await imageHashes(png, input.hashSize);
      const resultData = { ...hashes, hash_size: input.hashSize, frame_timestamp: formatTimestamp(t), title: input.title };
      const relative = storage.outputRelative(input.jobId, 'fingerprint.json');
      const out = storage.filePath(relative);
      await fs.mkdir(path.dirname(out), { recursive: true });
      await fs.writeFile(out, JSON.stringify(resultData, null, 2) + '\n');
      return { outputFile: relative, resultData };
    },
  };
}

export type PreviewActivities = ReturnType<typeof createPreviewActivities>;
