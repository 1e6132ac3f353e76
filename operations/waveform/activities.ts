import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import sharp from 'sharp';
import type { Storage } from '../../engines/storage';
import { rawSamplesRecipe } from '../../engines/ffmpeg/recipes/audio';
import { JobFailure } from '../../lib/job-failure';
import type { JobOutput } from '../../jobs/types';
import { durationOf, roundMs } from '../../activities/step/media-probe';
import { withSource, type OpenedSource, type SourceReadDeps, type SourceRef } from '../../activities/source/video-source';
import type { StepDeps } from '../step-deps';
import { audiowaveformData, drawPeaks, Peaks } from './peaks';
import type { WaveformParams } from './spec';

export interface WaveformDeps extends SourceReadDeps {
  storage: Storage;
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
    // the decoded samples stream from ffmpeg into the peaks: nothing decoded touches the disk
    const peaks = new Peaks(params.format === 'json' ? params.points! : params.width!);
    await src.run(rawSamplesRecipe(src.input, { sampleRate }), durationOf(probe), input.progressRange, (stdout) => addSamples(stdout, peaks));
    peaks.finish();
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
export const waveformSteps = ({ ffmpeg, storage, egress, config }: StepDeps) => createWaveformActivities({ ffmpeg, storage, egress, limits: config });
