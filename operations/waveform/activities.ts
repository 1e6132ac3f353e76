import fs from 'node:fs/promises';
import path from 'node:path';
import { addAbortSignal, type Readable } from 'node:stream';
import sharp from 'sharp';
import type { Storage } from '../../engines/storage';
import { rawSamplesRecipe, type SampleStretch } from '../../engines/ffmpeg/recipes/audio';
import { JobFailure } from '../../lib/job-failure';
import type { JobOutput } from '../../lib/job-reports';
import { durationOf, roundMs } from '../../activities/step/media-probe';
import { withSource, type ConsumeStdout, type OpenedSource, type SourceReadDeps, type SourceRef } from '../../activities/source/video-source';
import { progressReporter } from '../../activities/step/heartbeat';
import type { StepDeps } from '../step-deps';
import { audiowaveformData, drawPeaks, Peaks } from './peaks';
import type { WaveformParams } from './spec';
import { decodeStretches, splittable } from './stretches';

export interface WaveformDeps extends SourceReadDeps {
  storage: Storage;
  /** ffmpeg runs one long MP4's audio is decoded in at once (1: always one). */
  decoders: number;
  /** The length from which a source is split across the decoders (a test lowers it). */
  splitFromSeconds?: number;
}

export interface DrawWaveformInput extends SourceRef {
  jobId: string;
  title: string;
  params: WaveformParams;
  progressRange: [number, number];
}

/** The waveform (ffmpeg decodes, the peaks are taken here) for the `media-process` queue. */
export function createWaveformActivities(deps: WaveformDeps) {
  const { storage } = deps;

  return {
    /** The peaks of the source's first audio track, as audiowaveform JSON or a PNG; result_data is measured from the decoded samples. */
    async drawWaveform(input: DrawWaveformInput): Promise<JobOutput> {
      return withSource(deps, storage, input.jobId, input, (src) => draw(input, src));
    },
  };

  async function draw(input: DrawWaveformInput, src: OpenedSource): Promise<JobOutput> {
    const { params } = input;
    const probe = await src.probe();
    const audio = probe.streams.find((s) => s.codec_type === 'audio');
    if (!audio) throw JobFailure.user('unavailable', 'The source has no audio track, so there is no waveform to draw');
    const sampleRate = Number(audio.sample_rate) > 0 ? Number(audio.sample_rate) : 44100;
    const duration = durationOf(probe);
    const stretches = decodeStretches(duration, splittable(probe) ? deps.decoders : 1, deps.splitFromSeconds);
    // the decoded samples stream from ffmpeg into the peaks: nothing decoded touches the disk
    const parts = stretches.map(() => new Peaks(params.format === 'json' ? params.points! : params.width!));
    await decodeAll(src, stretches, duration, input.progressRange, (stretch, k) => ({
      args: rawSamplesRecipe(src.input, { sampleRate, stretch: stretches.length > 1 ? stretch : undefined }),
      consume: (stdout) => addSamples(stdout, parts[k]!),
    }));
    const peaks = parts[0]!.finish(...parts.slice(1));
    if (peaks.totalSamples === 0) throw src.unreadable('The source\'s audio track holds no samples');

    const relative = storage.outputRelative(input.jobId, `waveform.${params.format}`);
    const out = storage.outputPath(relative);
    await fs.mkdir(path.dirname(out), { recursive: true });
    const size =
      params.format === 'json'
        ? (await fs.writeFile(out, JSON.stringify(audiowaveformData(peaks, sampleRate))), { points: peaks.length })
        : (await sharp(drawPeaks(peaks, params.width!, params.height!), { raw: { width: params.width!, height: params.height!, channels: 4 } }).png().toFile(out),
          { width: params.width!, height: params.height! });
    await storage.commitOutput(relative);
    return {
      outputFile: relative,
      resultData: { format: params.format, duration: roundMs(peaks.totalSamples / sampleRate), ...size, sample_rate: sampleRate, samples_per_pixel: peaks.samplesPerPixel, title: input.title },
    };
  }
}

/**
 * Runs one ffmpeg per stretch, all at once, their progress summed by the audio each has decoded.
 * When one fails the others' output is cut, which ends them; the step returns only once every run
 * has ended, with the first failure.
 */
async function decodeAll(
  src: OpenedSource,
  stretches: SampleStretch[],
  duration: number,
  range: [number, number],
  runOf: (stretch: SampleStretch, k: number) => { args: string[]; consume: ConsumeStdout },
): Promise<void> {
  if (stretches.length === 1) {
    const { args, consume } = runOf(stretches[0]!, 0);
    await src.run(args, duration, range, consume);
    return;
  }
  const report = progressReporter(range);
  const decoded = stretches.map(() => 0);
  const lengthOf = (s: SampleStretch) => s.seconds ?? Math.max(1, duration - s.from);
  const cut = new AbortController();
  let firstFailure: unknown = null;
  const runs = stretches.map(async (stretch, k) => {
    const { args, consume } = runOf(stretch, k);
    const onProgress = (fraction: number) => {
      decoded[k] = fraction * lengthOf(stretch);
      report(decoded.reduce((a, b) => a + b, 0) / Math.max(1, duration));
    };
    try {
      await src.run(args, lengthOf(stretch), onProgress, (stdout) => consume(addAbortSignal(cut.signal, stdout)));
    } catch (err) {
      firstFailure ??= err;
      cut.abort();
      throw err;
    }
  });
  await Promise.allSettled(runs);
  if (firstFailure !== null) throw firstFailure;
}

/** Feeds a stream of 16-bit little-endian mono samples to the peaks, as it arrives. */
async function addSamples(stdout: Readable, peaks: Peaks): Promise<void> {
  let carry: Buffer | null = null;
  for await (const chunk of stdout as AsyncIterable<Buffer>) {
    const bytes: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    const even = bytes.length - (bytes.length % 2);
    carry = even < bytes.length ? Buffer.from(bytes.subarray(even)) : null;
    // an Int16Array view needs an even offset; a copy has one
    const aligned = bytes.byteOffset % 2 === 0 ? bytes : Buffer.from(bytes.subarray(0, even));
    peaks.add(new Int16Array(aligned.buffer, aligned.byteOffset, even / 2));
  }
}

/** The waveform's own step, as its worker builds it. */
export const waveformSteps = ({ ffmpeg, storage, egress, config }: StepDeps) => createWaveformActivities({ ffmpeg, storage, egress, limits: config, decoders: config.waveformDecoders });
