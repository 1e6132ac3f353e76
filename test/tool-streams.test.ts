// A tool's standard output read as a stream (the ffmpeg engine's consumeStdout): what the waveform
// draws from. Real ffmpeg; what is checked is what a caller sees: the bytes, the progress, ffmpeg
// held back by a slow reader, and ffmpeg gone after a cancel or a failed reader.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';

const run = promisify(execFile);
const SECONDS = 30;
const RATE = 8000;

describe('streamed tool output: ffmpeg\'s standard output read as it is made', function () {
  this.timeout(120_000);
  const ffmpeg = createFfmpegEngine({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe' });
  let dir: string;
  let source: string;
  /** Decoded mono 16-bit samples of the source, on standard output; `before` goes before its -i. */
  const samplesOf = (before: string[] = []) => [...before, '-i', source, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(RATE), '-c:a', 'pcm_s16le', '-f', 's16le', '-y', 'pipe:1'];
  /** ffmpeg processes still reading this test's source. */
  const ffmpegsOfSource = () => {
    try {
      return execFileSync('pgrep', ['-f', source]).toString().trim().split('\n').filter(Boolean);
    } catch {
      return []; // pgrep exits 1 when nothing matches
    }
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tool-streams-'));
    source = path.join(dir, 'tone.flac');
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=300:sample_rate=${RATE}:duration=${SECONDS}`, '-ac', '1', source]);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('hands over every sample, with progress to the end, and writes nothing to disk', async () => {
    let bytes = 0;
    const progress: number[] = [];
    await ffmpeg.run({
      args: samplesOf(),
      durationHint: SECONDS,
      onProgress: (f) => progress.push(f),
      consumeStdout: async (out: Readable) => {
        for await (const chunk of out as AsyncIterable<Buffer>) bytes += chunk.length;
      },
    });
    assert.equal(bytes, SECONDS * RATE * 2);
    assert.equal(progress.at(-1), 1, `progress: ${progress.join(', ')}`);
    assert.deepEqual(fs.readdirSync(dir), ['tone.flac']);
  });

  it('a reader that pauses holds ffmpeg back: it has not finished while the output waits', async () => {
    let ended = false;
    let bytes = 0;
    let endedDuringPause: boolean | null = null;
    await ffmpeg.run({
      args: samplesOf(),
      durationHint: SECONDS,
      onProgress: (f) => {
        if (f === 1) ended = true;
      },
      consumeStdout: async (out: Readable) => {
        for await (const chunk of out as AsyncIterable<Buffer>) {
          bytes += chunk.length;
          if (endedDuringPause === null) {
            // 480 kB of output against a pipe and a stream buffer of 64 kB each: ffmpeg must wait
            await sleep(1500);
            endedDuringPause = ended;
          }
        }
      },
    });
    assert.equal(endedDuringPause, false, 'ffmpeg finished while its output was not being read');
    assert.equal(bytes, SECONDS * RATE * 2);
  });

  it('a cancel mid-stream stops ffmpeg and rejects; the next run is whole', async () => {
    const abort = new AbortController();
    let bytes = 0;
    // -re: the source is read at its own pace, so the run lasts 30 s unless it is cancelled
    const cancelled = ffmpeg.run({
      args: samplesOf(['-re']),
      durationHint: SECONDS,
      signal: abort.signal,
      consumeStdout: async (out: Readable) => {
        for await (const chunk of out as AsyncIterable<Buffer>) {
          bytes += chunk.length;
          abort.abort();
        }
      },
    });
    await assert.rejects(cancelled, /cancelled/);
    assert.ok(bytes > 0 && bytes < SECONDS * RATE * 2, `bytes before the cancel: ${bytes}`);
    assert.deepEqual(ffmpegsOfSource(), [], 'ffmpeg still running after the cancel');

    let again = 0;
    await ffmpeg.run({ args: samplesOf(), consumeStdout: async (out) => {
      for await (const chunk of out as AsyncIterable<Buffer>) again += chunk.length;
    } });
    assert.equal(again, SECONDS * RATE * 2);
  });

  it('a reader that fails stops ffmpeg, and its error is the run\'s', async () => {
    const failed = ffmpeg.run({
      args: samplesOf(['-re']),
      consumeStdout: async (out: Readable) => {
        for await (const chunk of out as AsyncIterable<Buffer>) if (chunk.length) throw new Error('the reader gave up');
      },
    });
    await assert.rejects(failed, /the reader gave up/);
    assert.deepEqual(ffmpegsOfSource(), [], 'ffmpeg still running after its reader failed');
  });
});
