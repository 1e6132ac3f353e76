import assert from 'node:assert/strict';
import { rawSamplesRecipe } from '../../engines/ffmpeg/recipes/audio';
import { audiowaveformData, drawPeaks, Peaks, rowOf, WAVE_COLOUR } from './peaks';
import { WaveformRequestSchema } from './spec';
import { decodeStretches, splittable, SPLIT_FROM_SECONDS } from './stretches';

const URL = 'https://media.example.com/a.mp3';

describe('waveform: request form and peaks', () => {
  it('defaults to JSON with 1000 points; PNG to 1800x280; the other format\'s fields are null', () => {
    assert.deepEqual(WaveformRequestSchema.parse({ url: URL }), { url: URL, format: 'json', points: 1000, width: null, height: null, webhook_url: null });
    assert.deepEqual(WaveformRequestSchema.parse({ url: URL, format: 'png' }), { url: URL, format: 'png', points: null, width: 1800, height: 280, webhook_url: null });
  });

  it('refuses fields of the other format and sizes out of range, naming the field', () => {
    const problems = (body: object) => {
      const r = WaveformRequestSchema.safeParse(body);
      assert.equal(r.success, false);
      return r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    assert.deepEqual(problems({ url: URL, format: 'png', points: 500 }), ['points: applies only to format json']);
    assert.deepEqual(problems({ url: URL, width: 500 }), ['width: applies only to format png']);
    assert.deepEqual(problems({ url: URL, points: 9 }), ['points: must be at least 10']);
    assert.deepEqual(problems({ url: URL, format: 'png', height: 2001 }), ['height: must be at most 2000']);
    assert.match(problems({ url: URL, format: 'svg' })[0]!, /^format: must be one of json, png/);
  });

  it('takes min and max per run of samples; the last pair also takes the remainder', () => {
    const peaks = new Peaks(3); // 10 samples: 3 per pixel, the last pixel 4
    peaks.add(Int16Array.from([1, -2, 3, 4]));
    peaks.add(Int16Array.from([-5, 6, 7, -8, 9, -10]));
    peaks.finish();
    assert.equal(peaks.samplesPerPixel, 3);
    assert.deepEqual([...peaks.min], [-2, -5, -10]);
    assert.deepEqual([...peaks.max], [3, 6, 9]);
  });

  it('writes audiowaveform\'s version 2 data: 8-bit values as it converts them, min and max interleaved', () => {
    const peaks = new Peaks(2);
    peaks.add(Int16Array.from([-32768, 32767, -300, 300]));
    assert.deepEqual(audiowaveformData(peaks.finish(), 44100), { version: 2, channels: 1, sample_rate: 44100, samples_per_pixel: 2, bits: 8, length: 2, data: [-128, 127, -1, 1] });
  });

  it('fewer samples than points: one pair per sample; no samples: no pairs', () => {
    const short = new Peaks(10);
    short.add(Int16Array.from([5, -5, 0]));
    assert.equal(short.finish().length, 3);
    const empty = new Peaks(2).finish();
    assert.deepEqual([empty.totalSamples, empty.length], [0, 0]);
  });

  it('a stream longer than its bins: the runs are exact in length, their edges within a bin', () => {
    // 100,003 samples into 7 pixels, with room for 64 bins: bins of 2,048 samples
    const total = 100_003;
    const signal = Int16Array.from({ length: total }, (_, i) => Math.round(Math.sin(i / 997) * 20_000 + ((i * 7919) % 2001) - 1000));
    const peaks = new Peaks(7, 64);
    for (let i = 0; i < total; i += 4_099) peaks.add(signal.subarray(i, i + 4_099));
    peaks.finish();
    assert.deepEqual([peaks.totalSamples, peaks.length, peaks.samplesPerPixel], [total, 7, Math.floor(total / 7)]);
    const spp = peaks.samplesPerPixel;
    const bin = 2_048;
    const extreme = (from: number, to: number) => {
      const run = signal.subarray(Math.max(0, from), Math.min(total, to));
      return [Math.min(...run), Math.max(...run)];
    };
    for (let px = 0; px < 7; px++) {
      const end = px === 6 ? total : (px + 1) * spp;
      // what the pixel holds lies between its exact run narrowed and widened by a bin at each edge
      const [wideMin, wideMax] = extreme(px * spp - bin, end + bin);
      const [narrowMin, narrowMax] = extreme(px * spp + bin, end - bin);
      assert.ok(peaks.min[px]! >= wideMin! && peaks.min[px]! <= narrowMin!, `pixel ${px} min ${peaks.min[px]} outside ${wideMin}..${narrowMin}`);
      assert.ok(peaks.max[px]! <= wideMax! && peaks.max[px]! >= narrowMax!, `pixel ${px} max ${peaks.max[px]} outside ${narrowMax}..${wideMax}`);
    }
  });

  it('a stream taken in stretches by one Peaks each, joined: the same runs and total as one Peaks over it all', () => {
    const total = 10_007;
    const signal = Int16Array.from({ length: total }, (_, i) => ((i * 7919) % 60_001) - 30_000);
    const one = new Peaks(37);
    one.add(signal);
    one.finish();
    const parts = [[0, 3_001], [3_001, 7_000], [7_000, total]].map(([from, to]) => {
      const part = new Peaks(37);
      part.add(signal.subarray(from, to));
      return part;
    });
    const joined = parts[0]!.finish(...parts.slice(1));
    assert.deepEqual([joined.totalSamples, joined.length, joined.samplesPerPixel], [one.totalSamples, one.length, one.samplesPerPixel]);
    assert.deepEqual([...joined.min], [...one.min]);
    assert.deepEqual([...joined.max], [...one.max]);
  });

  it('splits an indexed source of 5 minutes or more into one stretch per decoder, on whole seconds, the last to the end', () => {
    assert.deepEqual(decodeStretches(3600, 2), [{ from: 0, seconds: 1800 }, { from: 1800, seconds: null }]);
    assert.deepEqual(decodeStretches(1000.4, 3), [{ from: 0, seconds: 333 }, { from: 333, seconds: 334 }, { from: 667, seconds: null }]);
    // each stretch at least half the threshold long: 5 minutes on 4 decoders is two stretches
    assert.deepEqual(decodeStretches(SPLIT_FROM_SECONDS, 4), [{ from: 0, seconds: 150 }, { from: 150, seconds: null }]);
    assert.deepEqual(decodeStretches(SPLIT_FROM_SECONDS - 1, 4), [{ from: 0, seconds: null }]);
    assert.deepEqual(decodeStretches(3600, 1), [{ from: 0, seconds: null }]);
    assert.deepEqual(decodeStretches(0, 4), [{ from: 0, seconds: null }]);
    assert.equal(splittable({ format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2' }, streams: [] }), true);
    for (const name of ['mp3', 'matroska,webm', 'aac', 'ogg', 'wav']) assert.equal(splittable({ format: { format_name: name }, streams: [] }), false, name);
  });

  it('draws each column from its max down to its min; silence is the centre row', () => {
    const peaks = new Peaks(2);
    peaks.add(Int16Array.from([0, 0, -16384, 16384]));
    const [w, h] = [2, 33];
    const image = drawPeaks(peaks.finish(), w, h);
    const painted = (x: number) => [...Array(h).keys()].filter((y) => image[(y * w + x) * 4 + 3] === WAVE_COLOUR[3]);
    assert.deepEqual(painted(0), [16]);
    assert.deepEqual(painted(1), [...Array(rowOf(-16384, h) - rowOf(16384, h) + 1).keys()].map((k) => k + rowOf(16384, h)));
    assert.equal(rowOf(16384, h), 8);
    assert.equal(rowOf(-16384, h), 24);
  });

  it("decodes the first audio track to headerless mono 16-bit samples at the source's own rate, on standard output in full blocks", () => {
    const input = (before: string[]) => [...before, '-i', 'https://cdn.example/a.mp3'];
    assert.deepEqual(rawSamplesRecipe(input, { sampleRate: 48_000 }), [
      '-i', 'https://cdn.example/a.mp3', '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '48000', '-c:a', 'pcm_s16le', '-flush_packets', '0', '-f', 's16le', '-y', 'pipe:1',
    ]);
    // a stretch: seek and length as input options, so ffmpeg trims to the sample
    assert.deepEqual(rawSamplesRecipe(input, { sampleRate: 44_100, stretch: { from: 1800, seconds: 900 } }).slice(0, 7), ['-ss', '1800', '-t', '900', '-i', 'https://cdn.example/a.mp3', '-map']);
    assert.deepEqual(rawSamplesRecipe(input, { sampleRate: 44_100, stretch: { from: 2700, seconds: null } }).slice(0, 5), ['-ss', '2700', '-i', 'https://cdn.example/a.mp3', '-map']);
  });
});
