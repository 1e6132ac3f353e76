// The waveform step on a long MP4: its audio decoded by several ffmpeg runs at once, one stretch
// each, and the peaks joined. Real ffmpeg, a real origin and the egress proxy; the engine is only
// wrapped to count the runs. What is checked is what a caller sees: the same peaks, duration and
// progress as one decode, and no ffmpeg left behind when one stretch fails.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import type { EgressProxy } from '../../engines/egress/egress-proxy';
import { createFfmpegEngine, type FfmpegEngine } from '../../engines/ffmpeg/ffmpeg.engine';
import { LocalStorage } from '../../engines/storage';
import { loadConfig } from '../../lib/config';
import { activityEnv } from '../../test/helpers/activity-env';
import { testEgress } from '../../test/helpers/egress';
import { startMediaOrigin, type MediaOrigin } from '../../test/helpers/media-origin';
import { createWaveformActivities, type DrawWaveformInput } from './activities';
import type { AudiowaveformData } from './peaks';

const run = promisify(execFile);
const SECONDS = 60;
const POINTS = 600;

/** ffmpeg, wrapped to count its runs, how many ran at once, and (for `failRun`) to fail that run's reader at its first block. */
function countedEngine(inner: FfmpegEngine, failRun?: number) {
  const seen = { runs: [] as string[][], active: 0, mostAtOnce: 0, activeWhenAnyEnded: [] as number[] };
  const engine: FfmpegEngine = {
    ...inner,
    run: async (req) => {
      seen.runs.push(req.args);
      const k = seen.runs.length;
      seen.active++;
      seen.mostAtOnce = Math.max(seen.mostAtOnce, seen.active);
      const failing = async (out: Readable) => {
        for await (const _ of out as AsyncIterable<Buffer>) throw new Error('the reader of one stretch failed');
      };
      try {
        return await inner.run(k === failRun ? { ...req, consumeStdout: failing } : req);
      } finally {
        seen.active--;
      }
    },
  };
  return { engine, seen };
}

describe('waveform of a long MP4: its audio decoded in stretches at once, the peaks joined', function () {
  this.timeout(180_000);
  const config = loadConfig({ ALLOW_PRIVATE_NETWORK: '1' });
  const ffmpeg = createFfmpegEngine(config);
  let dir: string;
  let storage: LocalStorage;
  let origin: MediaOrigin;
  let egress: EgressProxy;

  const params = { url: 'https://example.com/a', format: 'json' as const, points: POINTS, width: null, height: null, webhook_url: null };
  /** A job whose work folder holds `name` as its source. */
  async function jobWith(name: string): Promise<DrawWaveformInput> {
    const jobId = crypto.randomUUID();
    const work = storage.workDirOf(jobId);
    fs.mkdirSync(work, { recursive: true });
    fs.copyFileSync(path.join(dir, name), path.join(work, name));
    return { jobId, sourceFile: name, title: 'T', params, progressRange: [50, 99] };
  }
  async function draw(engine: FfmpegEngine, decoders: number, input: DrawWaveformInput, progress: number[] = []) {
    const acts = createWaveformActivities({ ffmpeg: engine, storage, egress, limits: config, decoders, splitFromSeconds: 20 });
    const out = (await activityEnv((p) => progress.push(p)).run(acts.drawWaveform, input)) as Awaited<ReturnType<typeof acts.drawWaveform>>;
    const data = JSON.parse(fs.readFileSync(storage.outputPath(out.outputFile), 'utf8')) as AudiowaveformData;
    return { out, data };
  }
  /** ffmpeg processes still reading `name`. */
  const ffmpegsReading = (name: string) => {
    try {
      return execFileSync('pgrep', ['-f', `ffmpeg.*${name}`]).toString().trim().split('\n').filter(Boolean);
    } catch {
      return []; // pgrep exits 1 when nothing matches
    }
  };
  /** The whole file decoded in one run: what the stretches must add up to. */
  let whole: Awaited<ReturnType<typeof draw>>;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waveform-stretches-'));
    storage = new LocalStorage(loadConfig({ DATA_DIR: path.join(dir, 'data') }));
    // a tone whose loudness rises and falls every 7 s, under noise, so that every pixel differs from its neighbours
    const audio = ['-f', 'lavfi', '-i', `aevalsrc=0.7*sin(2*PI*220*t)*abs(sin(PI*t/7))+0.05*(random(0)-0.5):s=44100:d=${SECONDS}`];
    await run('ffmpeg', ['-v', 'error', ...audio, '-ac', '2', '-c:a', 'aac', '-b:a', '96k', path.join(dir, 'long.m4a')]);
    await run('ffmpeg', ['-v', 'error', ...audio, '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '96k', path.join(dir, 'long.mp3')]);
    origin = await startMediaOrigin(dir);
    egress = await testEgress();
    whole = await draw(ffmpeg, 1, await jobWith('long.m4a'));
  });

  after(async () => {
    await origin?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The stretches' peaks against the whole's: the same length and duration, and every value within
   * one 8-bit step. AAC's decoder starts afresh at a seek (its noise substitution draws other random
   * numbers), so a few samples differ by a little and a value on the edge of a step can move by one.
   */
  function assertSamePeaks(data: AudiowaveformData, duration: unknown) {
    assert.deepEqual([data.length, data.samples_per_pixel, data.sample_rate], [whole.data.length, whole.data.samples_per_pixel, whole.data.sample_rate]);
    assert.equal(duration, whole.out.resultData.duration);
    const apart = data.data.map((v, i) => Math.abs(v - whole.data.data[i]!));
    const differing = apart.filter((d) => d > 0).length;
    assert.ok(Math.max(...apart) <= 1 && differing <= data.data.length / 20, `values apart from one decode's: ${differing} of ${data.data.length}, at most ${Math.max(...apart)}`);
  }

  it('a local MP4: three ffmpeg runs at once, sample-exact stretches, the peaks and progress of one decode', async () => {
    assert.equal(whole.data.length, POINTS);
    assert.ok(Math.abs(Number(whole.out.resultData.duration) - SECONDS) < 0.1, `duration ${whole.out.resultData.duration}`);
    const { engine, seen } = countedEngine(ffmpeg);
    const progress: number[] = [];
    const { out, data } = await draw(engine, 3, await jobWith('long.m4a'), progress);
    assert.equal(seen.runs.length, 3);
    assert.equal(seen.mostAtOnce, 3);
    assert.deepEqual(seen.runs.map((args) => args.slice(args.indexOf('-ss'), args.indexOf('-i'))), [['-ss', '0', '-t', '20'], ['-ss', '20', '-t', '20'], ['-ss', '40']]);
    assertSamePeaks(data, out.resultData.duration);
    assert.ok(progress.every((p, i) => i === 0 || p >= progress[i - 1]!), `progress went back: ${progress.join(', ')}`);
    assert.equal(progress.at(-1), 99, `progress: ${progress.join(', ')}`);
  });

  it('the same MP4 read in place through the egress proxy, from an origin that serves ranges', async () => {
    const { engine, seen } = countedEngine(ffmpeg);
    const input: DrawWaveformInput = { jobId: crypto.randomUUID(), sourceFile: null, media: { url: origin.url('range', 'long.m4a'), headers: {}, probe: null }, title: 'T', params, progressRange: [50, 99] };
    const { out, data } = await draw(engine, 2, input);
    assert.deepEqual(seen.runs.map((args) => args.includes('-ss')), [true, true]);
    assert.equal(seen.mostAtOnce, 2);
    assertSamePeaks(data, out.resultData.duration);
  });

  it('an MP3 (no index to seek by) is decoded in one run', async () => {
    const { engine, seen } = countedEngine(ffmpeg);
    const { data } = await draw(engine, 3, await jobWith('long.mp3'));
    assert.equal(seen.runs.length, 1);
    assert.equal(seen.runs[0]!.includes('-ss'), false);
    assert.equal(data.length, POINTS);
  });

  it('one stretch failing ends the others: the step fails once every run has ended, and no ffmpeg is left', async () => {
    const { engine, seen } = countedEngine(ffmpeg, 2);
    const input = await jobWith('long.m4a');
    await assert.rejects(draw(engine, 3, input));
    assert.equal(seen.runs.length, 3);
    assert.equal(seen.active, 0, 'a run was still going when the step failed');
    assert.deepEqual(ffmpegsReading(input.jobId), []);
    assert.equal(fs.existsSync(storage.outputPath(storage.outputRelative(input.jobId, 'waveform.json'))), false, 'an output was stored');
  });
});
