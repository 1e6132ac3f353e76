// Peaks of 16-bit mono audio and the two ways they are delivered: audiowaveform's JSON data format
// (version 2, as BBC's audiowaveform writes it and peaks.js reads it) and a drawn image. Pure.

/** Min/max of each of `pixels` runs of samples: each run is samplesPerPixel long, the last also takes the remainder. */
export class Peaks {
  readonly samplesPerPixel: number;
  readonly length: number;
  readonly min: Int16Array;
  readonly max: Int16Array;
  private seen = 0;

  constructor(readonly totalSamples: number, pixels: number) {
    this.length = Math.max(0, Math.min(pixels, totalSamples));
    this.samplesPerPixel = Math.max(1, Math.floor(totalSamples / Math.max(1, pixels)));
    this.min = new Int16Array(this.length).fill(32767);
    this.max = new Int16Array(this.length).fill(-32768);
  }

  /** Takes the next samples, in order. */
  add(samples: Int16Array): void {
    const last = this.length - 1;
    let i = 0;
    while (i < samples.length && last >= 0) {
      const px = Math.min(Math.floor(this.seen / this.samplesPerPixel), last);
      // this pixel's samples within the chunk: up to its end, or all the rest for the last pixel
      const end = px === last ? samples.length : Math.min(samples.length, i + (px + 1) * this.samplesPerPixel - this.seen);
      let lo = this.min[px]!;
      let hi = this.max[px]!;
      this.seen += end - i;
      for (; i < end; i++) {
        const s = samples[i]!;
        if (s < lo) lo = s;
        if (s > hi) hi = s;
      }
      this.min[px] = lo;
      this.max[px] = hi;
    }
  }

  /** A pixel no sample reached (the decoder gave fewer than announced) is silence. */
  finish(): this {
    for (let px = 0; px < this.length; px++) {
      if (this.min[px]! > this.max[px]!) this.min[px] = this.max[px] = 0;
    }
    return this;
  }
}

/** audiowaveform's JSON data format, version 2, one channel, 8 bits: `data` interleaves min and max. */
export interface AudiowaveformData {
  version: 2;
  channels: 1;
  sample_rate: number;
  samples_per_pixel: number;
  bits: 8;
  length: number;
  data: number[];
}

/** 16-bit to 8-bit as audiowaveform converts them (integer division by 256). */
const to8 = (v: number): number => Math.trunc(v / 256);

export function audiowaveformData(peaks: Peaks, sampleRate: number): AudiowaveformData {
  const data = new Array<number>(peaks.length * 2);
  for (let px = 0; px < peaks.length; px++) {
    data[2 * px] = to8(peaks.min[px]!);
    data[2 * px + 1] = to8(peaks.max[px]!);
  }
  return { version: 2, channels: 1, sample_rate: sampleRate, samples_per_pixel: peaks.samplesPerPixel, bits: 8, length: peaks.length, data };
}

/** The colour the waveform is drawn in (RGBA); the background is transparent. */
export const WAVE_COLOUR = [37, 99, 235, 255] as const;

/** Row of a sample value in an image `height` pixels high: full scale up at the top, the centre line for silence. */
export const rowOf = (value: number, height: number): number => Math.round(((1 - value / 32768) * (height - 1)) / 2);

/** The waveform drawn into an RGBA image, one column per pair: each column filled from its max down to its min. */
export function drawPeaks(peaks: Peaks, width: number, height: number): Buffer {
  const image = Buffer.alloc(width * height * 4);
  for (let x = 0; x < Math.min(width, peaks.length); x++) {
    const top = rowOf(peaks.max[x]!, height);
    const bottom = rowOf(peaks.min[x]!, height);
    for (let y = Math.min(top, bottom); y <= Math.max(top, bottom); y++) image.set(WAVE_COLOUR, (y * width + x) * 4);
  }
  return image;
}
