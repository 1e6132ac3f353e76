// "long media": every file operation on sources of 1, 10 and 60 minutes (BENCH_LONG_MINUTES), side by
// side, so each figure can be seen to grow linearly or better. For each job: its time (created →
// completed; the median of BENCH_LONG_REPEATS jobs) against the bare command on the same URL, the serve tree's peak resident memory above
// what it held just before (and, beside it, the peak of its private part: resident memory less the
// pages of mapped files, which a tool's shared libraries are, e.g. 43 of ffmpeg's 54 MB), and the peak growth of the job's folders in DATA_DIR while it ran (its
// temporary disk, the output included: work/ and files/) against the source's size plus the output's.
// The rest of DATA_DIR (the databases' write-ahead logs, the logs) is shown beside it: it grows with
// every job's progress writes, whatever its length, and SQLite reuses its WAL after a checkpoint.
//
// The sources are the shared speech recordings looped under ffmpeg's testsrc2 picture at 720p and
// 2 fps (H.264, AAC 96 kb/s): about 4.4 MB a minute, made once and cached. Transcription runs at BENCH_LONG_SPEECH_MINUTES (default 1 and 10): an hour
// of it takes longer than the rest of the bench together. Its idle is a speech worker with its model
// loaded, as after its first job or with WHISPER_PRELOAD: a serve whose runner has not started runs one
// unmeasured transcription first.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createSpeechServices } from '../../../engines/speech/services';
import { loadConfig, projectRoot } from '../../../lib/config';
import type { ServeStack } from '../../helpers/serve-stack';
import { fmt, groupProcesses, groupRss, isWarmSpeechRunner, median, type BenchContext, type BenchRow } from '../harness';
import { startOrigin, type Origin } from './media.rows';
import { startFloorWorker, type FloorWorker } from '../floor-worker';
import { emptyWorkflow } from '../floor-workflow';

const run = promisify(execFile);
const CACHE = path.join(os.tmpdir(), 'mediasvc-bench-long');
const SHARED = path.join(projectRoot, '../shared/media/speech');
const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';
const minutesOf = (v: string | undefined, fallback: number[]) => (v ? v.split(',').map(Number).filter((n) => n > 0) : fallback);
const MINUTES = minutesOf(process.env.BENCH_LONG_MINUTES, [1, 10, 60]);
const SPEECH_MINUTES = minutesOf(process.env.BENCH_LONG_SPEECH_MINUTES, [1, 10]);
/** Only the operations whose name matches (BENCH_LONG_OPS, a regular expression), e.g. `Mosaic|Waveform`. */
const ONLY = new RegExp(process.env.BENCH_LONG_OPS ?? '', 'i');

/** Jobs (and bare runs) per cell but for transcription, whose cells are one of each: one run moves by a tenth of a second, and an hour's download by seconds. */
const REPEATS = Math.max(1, Number(process.env.BENCH_LONG_REPEATS ?? 3));

/** The bounds of the long-media goal: time against the bare command, memory above idle, disk against source + output. */
const BOUND = { ratio: 1.2, speechRatio: 1.0, memoryMb: 200 };

interface Operation {
  name: string;
  speech?: boolean;
  /** The job's request. */
  body(url: string): [string, Record<string, unknown>];
  /** The bare command(s) for the same output, in `out`. */
  bare(url: string, out: string, seconds: number): Promise<void>;
}

let origin: Origin | null = null;
let tmp = '';
let floor: FloorWorker | null = null;

/** Speech of about a minute: the shared recordings (and the LibriVox clips when installed) at 44.1 kHz. */
async function speechUnit(): Promise<string> {
  const unit = path.join(CACHE, 'speech-unit.wav');
  if (fs.existsSync(unit)) return unit;
  const librivox = fs.existsSync(LIBRIVOX) ? fs.readdirSync(LIBRIVOX).filter((f) => f.endsWith('.wav')).sort().map((f) => path.join(LIBRIVOX, f)) : [];
  const sources = [...librivox, ...['jfk.wav', 'english.wav', 'jfk.flac'].map((f) => path.join(SHARED, f))];
  const inputs = sources.flatMap((s) => ['-i', s]);
  const filter = `${sources.map((_, i) => `[${i}:a]aresample=44100,aformat=channel_layouts=mono[a${i}]`).join(';')};${sources.map((_, i) => `[a${i}]`).join('')}concat=n=${sources.length}:v=0:a=1[out]`;
  await run('ffmpeg', ['-v', 'error', '-y', ...inputs, '-filter_complex', filter, '-map', '[out]', '-c:a', 'pcm_s16le', `${unit}.tmp.wav`]);
  fs.renameSync(`${unit}.tmp.wav`, unit);
  return unit;
}

/** `minutes` of looped speech under testsrc2 at 1280x720 and 2 fps: H.264, AAC 96 kb/s, faststart. */
async function source(minutes: number): Promise<string> {
  const file = path.join(CACHE, `long${minutes}min.mp4`);
  if (fs.existsSync(file)) return file;
  const unit = await speechUnit();
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=2', '-stream_loop', '-1', '-i', unit, '-t', String(minutes * 60),
    '-map', '0:v', '-map', '1:a', '-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'stillimage', '-g', '20', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '96k', '-movflags', '+faststart', `${file}.tmp.mp4`]);
  fs.renameSync(`${file}.tmp.mp4`, file);
  return file;
}

const ff = (args: string[]) => run('ffmpeg', ['-v', 'error', '-y', ...args], { maxBuffer: 64 * 1024 * 1024 });

function operations(): Operation[] {
  const config = loadConfig();
  const baseModel = createSpeechServices(config).registry.list().find((m) => m.size === 'base')?.dir ?? 'base';
  return [
    {
      name: 'Download as mp4',
      body: (url) => ['/v1/download', { url, format: 'mp4' }],
      bare: async (url, out) => {
        // yt-dlp skips a download whose file is already there (in under a second): each run starts without it
        fs.rmSync(path.join(out, 'dl.mp4'), { force: true });
        await run(config.ytdlpPath, ['--ignore-config', '--no-cache-dir', '-q', '-o', path.join(out, 'dl.mp4'), url]);
      },
    },
    {
      name: 'Thumbnail (at 25%), w320',
      body: (url) => ['/v1/preview', { url, preview_type: 'thumbnail', width: 320 }],
      bare: async (url, out, seconds) => void (await ff(['-ss', String(seconds / 4), '-i', url, '-frames:v', '1', '-vf', 'scale=320:-1:flags=lanczos', '-q:v', '2', path.join(out, 't.jpg')])),
    },
    {
      name: 'GIF 5 s, w480, fps 10',
      body: (url) => ['/v1/preview', { url, preview_type: 'gif', start: '00:00:20', duration: 5, width: 480, fps: 10 }],
      bare: async (url, out) => void (await ff(['-ss', '20', '-t', '5', '-i', url, '-filter_complex', '[0:v:0]fps=10,scale=480:-1:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[pal];[b][pal]paletteuse=dither=bayer:bayer_scale=5', '-loop', '0', path.join(out, 'g.gif')])),
    },
    {
      name: 'Mosaic 4x4, w640',
      body: (url) => ['/v1/preview', { url, preview_type: 'mosaic', columns: 4, rows: 4, width: 640 }],
      bare: async (url, out, seconds) => void (await ff(['-i', url, '-vf', `fps=16/${seconds},scale=160:-1:flags=lanczos,tile=4x4`, '-frames:v', '1', '-q:v', '2', path.join(out, 'm.jpg')])),
    },
    {
      name: 'Clip 10 s, w640',
      body: (url) => ['/v1/preview', { url, preview_type: 'clip', start: '00:00:20', duration: 10, width: 640 }],
      bare: async (url, out) => void (await ff(['-ss', '20', '-t', '10', '-i', url, '-vf', 'scale=640:-2:flags=lanczos', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart', path.join(out, 'c.mp4')])),
    },
    {
      name: 'Fingerprint',
      body: (url) => ['/v1/fingerprint', { url }],
      bare: async (url, out) => void (await ff(['-ss', '2.5', '-i', url, '-frames:v', '1', '-pix_fmt', 'rgb24', path.join(out, 'f.png')])),
    },
    {
      name: 'Waveform, 1000 points (JSON)',
      body: (url) => ['/v1/waveform', { url, format: 'json', points: 1000 }],
      // the decode the peaks are taken from, its samples thrown away: what any waveform tool starts with
      bare: async (url, out) => void (await ff(['-i', url, '-map', '0:a:0', '-vn', '-ac', '1', '-c:a', 'pcm_s16le', '-f', 'null', path.join(out, 'null')])),
    },
    {
      name: 'Transcribe (base)',
      speech: true,
      body: (url) => ['/v1/transcribe', { url, model_size: 'base' }],
      bare: async (url, out) => {
        const wav = path.join(out, 'speech.wav');
        await ff(['-i', url, '-map', '0:a:0', '-ac', '1', '-ar', '16000', wav]);
        // bare sequential faster-whisper, as the service ran before batching: the bound is "never slower"
        await run(config.whisperPython, ['-c', BARE_WHISPER, baseModel, wav], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, maxBuffer: 64 * 1024 * 1024 });
      },
    },
  ];
}

const BARE_WHISPER = `
import sys
from faster_whisper import WhisperModel
model = WhisperModel(sys.argv[1], device="cpu", compute_type="int8", local_files_only=True)
segments, _ = model.transcribe(sys.argv[2], beam_size=5, vad_filter=True, word_timestamps=True)
print(sum(1 for _ in segments))
`;

/** Bytes under the folders, each file once however many names it has (a download's output may be a hard link to its fetched file). */
function folderBytes(...dirs: string[]): number {
  let total = 0;
  const seen = new Set<string>();
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return; // removed while we looked
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      try {
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) {
          const st = fs.statSync(p);
          if (!seen.has(`${st.dev}:${st.ino}`)) total += st.size;
          seen.add(`${st.dev}:${st.ino}`);
        }
      } catch {
        // removed while we looked
      }
    }
  };
  for (const dir of dirs) walk(dir);
  return total;
}

/** Folders of DATA_DIR that hold a job's own files: its scratch folder and its outputs. */
const JOB_FOLDERS = ['work', 'files'];

/**
 * Runs `fn` while sampling the serve tree's memory and DATA_DIR's size; their peaks above what they
 * were at the start: the job's folders (`disk`) and everything else in DATA_DIR (`state`).
 */
async function sampled<T>(stack: ServeStack, fn: () => Promise<T>): Promise<{ result: T; memory: number; privateMemory: number; disk: number; state: number }> {
  const pgid = stack.svc.child.pid!;
  const jobBytes = () => folderBytes(...JOB_FOLDERS.map((f) => path.join(stack.dataDir, f)));
  const { bytes: memory0, private: private0 } = groupRss(pgid);
  const disk0 = jobBytes();
  const state0 = folderBytes(stack.dataDir) - disk0;
  let memory = 0;
  let privateMemory = 0;
  let disk = 0;
  let state = 0;
  const sample = () => {
    const now = groupRss(pgid);
    memory = Math.max(memory, now.bytes - memory0);
    privateMemory = Math.max(privateMemory, now.private - private0);
    const jobNow = jobBytes();
    disk = Math.max(disk, jobNow - disk0);
    state = Math.max(state, folderBytes(stack.dataDir) - jobNow - state0);
  };
  const timer = setInterval(sample, 100);
  try {
    const result = await fn();
    sample();
    return { result, memory, privateMemory, disk, state };
  } finally {
    clearInterval(timer);
  }
}

async function job(stack: ServeStack, request: [string, Record<string, unknown>]): Promise<{ seconds: number; outputBytes: number }> {
  const created = await stack.api('POST', request[0], request[1]);
  if (created.status !== 202) throw new Error(`${request[0]}: ${created.status} ${JSON.stringify(created.body)}`);
  const done = await stack.waitJob(created.body.job_id as string, 3_600_000);
  if (done.status !== 'completed') throw new Error(`${request[0]} failed: ${done.error_message}`);
  const j = done as unknown as { created_at: string; completed_at: string; download_url?: string };
  const output = j.download_url ? (await (await fetch(j.download_url)).arrayBuffer()).byteLength : 0;
  return { seconds: (Date.parse(j.completed_at) - Date.parse(j.created_at)) / 1000, outputBytes: output };
}

const key = (op: number, minutes: number, what: string) => `${op}:${minutes}:${what}`;

const row: BenchRow = {
  name: 'long media',
  order: 90,
  async setup() {
    fs.mkdirSync(CACHE, { recursive: true });
    for (const m of MINUTES) await source(m);
    origin = await startOrigin(CACHE);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-long-out-'));
  },
  async measure(ctx: BenchContext) {
    const figures: Record<string, number> = {};
    const ops = operations();
    for (const m of MINUTES) {
      const name = path.basename(await source(m));
      const url = origin!.url(name);
      const sourceBytes = fs.statSync(path.join(CACHE, name)).size;
      for (const [i, op] of ops.entries()) {
        if ((op.speech && !SPEECH_MINUTES.includes(m)) || !ONLY.test(op.name)) continue;
        if (op.speech && !groupProcesses(ctx.stack.svc.child.pid!).some((p) => isWarmSpeechRunner(p.pid))) {
          // idle for speech is a worker with its model loaded (after its first job, or WHISPER_PRELOAD): not measured
          await job(ctx.stack, op.body(url));
        }
        // a cell is the median of REPEATS jobs and as many bare runs, taken in turns (which side goes first
        // alternates: the one after writes onto a disk still flushing the other's output); speech runs once
        const times: number[] = [];
        const bares: number[] = [];
        const peaks = { memory: 0, privateMemory: 0, disk: 0, state: 0 };
        let outputBytes = 0;
        for (let r = 0; r < (op.speech ? 1 : REPEATS); r++) {
          const bareRun = async () => {
            await ctx.quiesce();
            const t0 = performance.now();
            await op.bare(url, tmp, m * 60);
            bares.push((performance.now() - t0) / 1000);
          };
          if (r % 2 === 1) await bareRun();
          await ctx.quiesce();
          const { result, ...peak } = await sampled(ctx.stack, () => job(ctx.stack, op.body(url)));
          times.push(result.seconds);
          for (const k of Object.keys(peaks) as (keyof typeof peaks)[]) peaks[k] = Math.max(peaks[k], peak[k]);
          outputBytes = result.outputBytes;
          if (r % 2 === 0) await bareRun();
        }
        const { memory, privateMemory, disk, state } = peaks;
        Object.assign(figures, {
          [key(i, m, 's')]: median(times),
          [key(i, m, 'bare')]: median(bares),
          [key(i, m, 'memory')]: memory,
          [key(i, m, 'private')]: privateMemory,
          [key(i, m, 'disk')]: disk,
          [key(i, m, 'state')]: state,
          [key(i, m, 'allowed')]: sourceBytes + outputBytes,
        });
      }
    }
    // what any job pays before its work: a durable workflow alone, and one that runs a step on another worker's queue
    floor ??= await startFloorWorker(ctx);
    await floor.measure(ctx, 3); // the worker's first workflows pay for loading its bundle
    await ctx.quiesce();
    figures.floorEmpty = await floor.measure(ctx, 15, emptyWorkflow);
    figures.floorStep = await floor.measure(ctx, 15);
    return figures;
  },
  report(m) {
    return operations().map((op, i) => {
      const cells = MINUTES.filter((min) => m[key(i, min, 's')] !== undefined).map((min) => {
        const [s, bare, memory, disk, allowed, state] = ['s', 'bare', 'memory', 'disk', 'allowed', 'state'].map((w) => m[key(i, min, w)] ?? NaN) as [number, number, number, number, number, number];
        const within = s / bare <= (op.speech ? BOUND.speechRatio : BOUND.ratio) && memory <= BOUND.memoryMb * 1e6 && disk <= allowed;
        const own = m[key(i, min, 'private')];
        return `${min} min: ${s.toFixed(1)} s vs ${bare.toFixed(1)} s, +${fmt.mb(memory)}${own === undefined ? '' : ` (private +${fmt.mb(own)})`}, disk ${fmt.mb(disk)} of ${fmt.mb(allowed)} (databases and logs +${fmt.mb(state)})${within ? '' : ' (over)'}`;
      });
      return { what: `long media: ${op.name}`, product: cells.join(' · '), peer: 'bare command', ratio: '' };
    }).concat(
      m.floorEmpty === undefined
        ? []
        : [{ what: 'long media: the floor of a job (medians of 15, started and awaited)', product: `a workflow with nothing in it ${fmt.s(m.floorEmpty)}; with one no-op step on a worker's queue ${fmt.s(m.floorStep!)}`, peer: '', ratio: '' }],
    );
  },
  async teardown() {
    await floor?.stop();
    await origin?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  },
};

export const rows = [row];
