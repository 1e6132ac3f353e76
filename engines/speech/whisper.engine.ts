// faster-whisper behind a small interface: engines/speech/whisper_runner.py (in the project's
// virtualenv) runs as a long-lived process per speech worker, so models stay loaded between jobs;
// requests and progress travel as JSON lines, results as a JSON file.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { projectRoot, type Config } from '../../lib/config';
import { applyToolNiceness, runProcess } from '../child-process';

export interface WhisperWord {
  word: string;
  start: number;
  end: number;
  probability: number;
}

export interface WhisperSegment {
  start: number;
  end: number;
  text: string;
  words?: WhisperWord[];
  /** The decoder's figures for the segment (faster-whisper's Segment fields). */
  decoding?: SegmentDecoding;
  /** One speaker per channel: the channel's letter, and the channel (0-based) it was recognised from. */
  speaker?: string;
  channel?: number;
}

export interface SegmentDecoding {
  id: number;
  seek: number;
  tokens: number[];
  temperature: number;
  avg_logprob: number;
  compression_ratio: number;
  no_speech_prob: number;
}

export interface LanguageCandidate {
  language: string;
  probability: number;
}

export interface WhisperResult {
  language: string;
  language_probability: number;
  /** Top 3 detected languages (only the chosen one when the language was given). */
  language_candidates: LanguageCandidate[];
  /** Seconds of audio. */
  duration: number;
  duration_after_vad: number;
  passes: { transcribe?: { segments: WhisperSegment[] }; translate?: { segments: WhisperSegment[] } };
  timings: Record<string, number>;
  /** Windows decoded at once (0: one after another, the audio being shorter than the batching threshold). */
  batch_size?: number;
  /** Sections the audio was read and decoded in (one unless it is longer than a section). */
  sections?: number;
  /** When diarization was asked for: [start, end, speaker] turns over the speech, speakers numbered from 0 in order of first speech. */
  speaker_turns?: SpeakerTurn[];
  /** With known speakers: the speakers whose voice matched a reference clip, by index. */
  speaker_names?: Record<string, string>;
  /** Reference clips that cannot name a voice (no speech in them): the runner stopped before recognising anything. */
  reference_problems?: { index: number; problem: string }[];
}

/**
 * A local media file whose first audio track the runner decodes itself (libav, in its own process) to
 * 16 kHz mono a section at a time, so no copy of the audio is written. It decodes it again for a
 * second pass and for speaker turns.
 */
export interface SpeechSamples {
  file: string;
  /** libav's input options: the protocols and containers it may open (the ffmpeg input guard's). */
  options: Record<string, string>;
  /** The source's length (from its probe): progress and the batching threshold go by it until the samples end. */
  seconds: number;
}

/** [start s, end s, speaker index]. */
export type SpeakerTurn = [number, number, number];

export interface WhisperRunRequest {
  /** Model folder, or a size name when downloading is allowed. */
  model: string;
  allowDownload?: boolean;
  downloadRoot?: string;
  /** A 16 kHz mono WAV (or any file faster-whisper decodes), or a media file the runner decodes a section at a time. */
  audio: string | SpeechSamples;
  /** ISO 639-1, or null to detect from the first 30 s of speech. */
  language: string | null;
  /** `translate` is Whisper's own speech → English translation. The first pass detects the language. */
  tasks: ('transcribe' | 'translate')[];
  /** Skip a later translate pass when the detected language is one of these. */
  translateSkipLanguages?: string[];
  wordTimestamps: boolean;
  /** Who spoke when: the runner finds speaker turns over the first pass's words (numSpeakers null: it estimates the number). */
  diarize?: { numSpeakers: number | null; knownSpeakers?: { name: string; audio: string }[] };
  /** Where the runner writes its result JSON. */
  output: string;
  signal?: AbortSignal;
  /** Fraction 0..1 of all passes, from seconds of audio done. */
  onProgress?: (fraction: number) => void;
  /** Each segment of the first pass, as it is recognised. */
  onSegment?: (text: string) => void;
}

export interface WhisperEngine {
  run(req: WhisperRunRequest): Promise<WhisperResult>;
  /** Starts a runner and loads the model (a folder, as a request names it) before any job asks for it. */
  warm(model: string): Promise<void>;
  /** Stops the warm runner processes (a worker shutting down). */
  close(): void;
}

export interface WhisperEngineOptions {
  python: string;
  /** Threads for CTranslate2; 0 = one per core. */
  cpuThreads?: number;
  beamSize?: number;
  /** Windows of speech decoded at once, for audio of at least batchFromSeconds; 0 or 1: one after another. */
  batchSize?: number;
  batchFromSeconds?: number;
  /** Seconds of audio read and decoded at a time (the runner's default: 300). */
  sectionSeconds?: number;
  /** Warm runner processes at most (requests beyond wait for one); the speech queue's concurrency. */
  processes?: number;
}

/** numpy's BLAS on one thread, as the speaker encoder's onnxruntime session keeps itself: in numpy the encoder ran 2.3 times as fast so with the other of 2 cores busy (16 % slower on idle ones); CTranslate2 keeps its own threads. */
const ONE_BLAS_THREAD = { OPENBLAS_NUM_THREADS: '1' };

type RunnerEvent = { event?: string; pass?: number; passes?: number; done?: number; total?: number; message?: string; text?: string };

/** What one request reports while it runs, and how it ends. */
interface Pending {
  onEvent(ev: RunnerEvent): void;
  finish(err: Error | null): void;
}

/**
 * One long-lived `whisper_runner.py --serve`: requests as JSON lines on stdin, one at a time, so a
 * model stays loaded between jobs. Offline (HF_HUB_OFFLINE=1) always: downloads go one-shot.
 */
class WarmRunner {
  private child: ChildProcessWithoutNullStreams | null = null;
  private pending: Pending | null = null;
  /** The settings of the last model used, loaded again when the process is restarted. */
  private lastModel: Record<string, unknown> | null = null;
  busy = false;

  constructor(
    private readonly python: string,
    /** Called whenever the runner becomes free (a waiting request may take it). */
    private readonly onFree: () => void,
  ) {}

  private start(): ChildProcessWithoutNullStreams {
    const env = { ...process.env, HF_HUB_OFFLINE: '1', HF_HUB_DISABLE_TELEMETRY: '1', TOKENIZERS_PARALLELISM: 'false', ...ONE_BLAS_THREAD };
    const child = spawn(this.python, [runnerPath(), '--serve'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    applyToolNiceness(child);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8192)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      let ev: RunnerEvent;
      try {
        ev = JSON.parse(line) as RunnerEvent;
      } catch {
        return;
      }
      this.pending?.onEvent(ev);
    });
    child.stdin.on('error', () => undefined); // a dead runner is reported by 'exit'
    child.on('error', (err) => this.pending?.finish(err));
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      const tail = stderr.trim().split('\n').slice(-3).join(' | ');
      this.pending?.finish(new WhisperError(`faster-whisper exited (${signal ?? `code ${String(code)}`})${tail ? ` (${tail})` : ''}`, null));
    });
    this.idle(child);
    return child;
  }

  /** An idle runner does not keep the Node process alive; a busy one does. */
  private idle(child: ChildProcessWithoutNullStreams, idle = true): void {
    for (const h of [child, child.stdout, child.stderr, child.stdin] as { ref(): void; unref(): void }[]) {
      if (idle) h.unref();
      else h.ref();
    }
  }

  /** Sends one request; resolves when the runner says done, rejects on its error, its death or the signal. */
  request(payload: Record<string, unknown>, signal: AbortSignal | undefined, onEvent: (ev: RunnerEvent) => void): Promise<void> {
    if (signal?.aborted) return Promise.reject(new Error('whisper cancelled'));
    const child = (this.child ??= this.start());
    this.busy = true;
    this.idle(child, false);
    return new Promise<void>((resolve, reject) => {
      let error: string | null = null;
      const onAbort = () => this.kill(child);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending = {
        onEvent: (ev) => {
          if (ev.event === 'error') error = ev.message ?? 'unknown error';
          if (ev.event === 'done' || ev.event === 'error') this.pending?.finish(null);
          else onEvent(ev);
        },
        finish: (err) => {
          this.pending = null;
          this.busy = false;
          queueMicrotask(this.onFree);
          signal?.removeEventListener('abort', onAbort);
          if (this.child === child) this.idle(child);
          if (signal?.aborted) return reject(new Error('whisper cancelled'));
          if (err) return reject(err);
          if (error !== null) return reject(new WhisperError(`faster-whisper failed: ${error}`, error));
          resolve();
        },
      };
      child.stdin.write(`${JSON.stringify(payload)}\n`);
    }).finally(() => {
      // a cancelled or crashed runner comes back at once, with its model loaded, for the next job
      if (!this.child && this.lastModel) this.rewarm();
    });
  }

  /** Remembers the model a request used, for rewarm after a restart. */
  remember(model: Record<string, unknown>): void {
    this.lastModel = model;
  }

  /** Loads the model (its settings, as a request names them) and keeps it for a restart. */
  warm(model: Record<string, unknown>): Promise<void> {
    this.remember(model);
    return this.request({ ...model, warm_only: true }, undefined, () => undefined);
  }

  private rewarm(): void {
    const model = this.lastModel;
    if (!model || this.busy) return;
    this.warm(model).catch(() => undefined);
  }

  /** Cancellation: the runner is killed (SIGTERM, then SIGKILL), and restarted for the next request. */
  private kill(child: ChildProcessWithoutNullStreams): void {
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 2000).unref();
  }

  close(): void {
    this.lastModel = null;
    if (this.child) this.kill(this.child);
    this.child = null;
  }
}

type WhisperConfig = Pick<Config, 'whisperPython' | 'whisperBatchSize' | 'whisperBatchFromSeconds' | 'whisperSectionSeconds'>;

/** The engine as the configuration sets it: batching, sections, one warm runner per step at once. */
export function createConfiguredWhisperEngine(config: WhisperConfig, processes: number): WhisperEngine {
  return createWhisperEngine({ python: config.whisperPython, processes, batchSize: config.whisperBatchSize, batchFromSeconds: config.whisperBatchFromSeconds, sectionSeconds: config.whisperSectionSeconds });
}

export function createWhisperEngine(opts: WhisperEngineOptions): WhisperEngine {
  const pool: WarmRunner[] = [];
  const waiting: (() => void)[] = [];
  const max = Math.max(1, opts.processes ?? 1);

  /** A free warm runner (a new one while under the limit), or the next one freed. */
  async function acquire(): Promise<WarmRunner> {
    for (;;) {
      // taken at once (busy), so no other request picks the same runner in between
      const free = pool.find((r) => !r.busy);
      if (free) return Object.assign(free, { busy: true });
      if (pool.length < max) {
        const r = new WarmRunner(opts.python, () => waiting.shift()?.());
        pool.push(r);
        return Object.assign(r, { busy: true });
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  }

  /** The settings a runner keeps a model loaded under: a request with the same ones finds it loaded. */
  const settingsOf = (model: string, downloadRoot: string | null) => ({ model, compute_type: 'int8', cpu_threads: opts.cpuThreads ?? 0, download_root: downloadRoot });

  function payloadOf(req: WhisperRunRequest) {
    return {
      ...settingsOf(req.model, req.downloadRoot ?? null),
      allow_download: req.allowDownload ?? false,
      audio: req.audio,
      language: req.language,
      tasks: req.tasks,
      translate_skip_languages: req.translateSkipLanguages ?? [],
      word_timestamps: req.wordTimestamps,
      diarize: req.diarize ? { num_speakers: req.diarize.numSpeakers, known_speakers: req.diarize.knownSpeakers ?? [] } : null,
      output: req.output,
      beam_size: opts.beamSize ?? 5,
      batch_size: opts.batchSize ?? 0,
      batch_from_s: opts.batchFromSeconds ?? 0,
      section_s: opts.sectionSeconds ?? null,
    };
  }

  const progressOf = (req: WhisperRunRequest) => (ev: RunnerEvent) => {
    if (ev.event === 'progress' && ev.total) req.onProgress?.(((ev.pass ?? 0) + (ev.done ?? 0) / ev.total) / (ev.passes ?? 1));
    if (ev.event === 'progress' && typeof ev.text === 'string' && (ev.pass ?? 0) === 0) req.onSegment?.(ev.text);
  };

  /** A fresh runner for this request only: used when a model may be downloaded (the warm runners stay offline). */
  async function oneShot(req: WhisperRunRequest): Promise<WhisperResult> {
    // Offline unless downloading was explicitly allowed: nothing may reach a model hub.
    const env = { ...process.env, HF_HUB_OFFLINE: req.allowDownload ? '0' : '1', HF_HUB_DISABLE_TELEMETRY: '1', TOKENIZERS_PARALLELISM: 'false', ...ONE_BLAS_THREAD };
    let error: string | null = null;
    const onProgress = progressOf(req);
    const res = await runProcess(opts.python, {
      args: [runnerPath(), JSON.stringify(payloadOf(req))],
      env,
      signal: req.signal,
      onLine: (line, stream) => {
        if (stream !== 'stdout' || !line.startsWith('{')) return;
        let ev: RunnerEvent;
        try {
          ev = JSON.parse(line) as RunnerEvent;
        } catch {
          return;
        }
        if (ev.event === 'error') error = ev.message ?? 'unknown error';
        else onProgress(ev);
      },
    });
    if (req.signal?.aborted) throw new Error('whisper cancelled');
    if (res.code !== 0) {
      const tail = res.stderr.trim().split('\n').slice(-3).join(' | ');
      throw new WhisperError(`faster-whisper failed: ${error ?? `exit code ${res.code}`}${!error && tail ? ` (${tail})` : ''}`, error);
    }
    return JSON.parse(await fs.readFile(req.output, 'utf8')) as WhisperResult;
  }

  return {
    async run(req) {
      if (req.allowDownload) return oneShot(req);
      const runner = await acquire();
      runner.remember(settingsOf(req.model, req.downloadRoot ?? null));
      await runner.request(payloadOf(req), req.signal, progressOf(req));
      return JSON.parse(await fs.readFile(req.output, 'utf8')) as WhisperResult;
    },
    async warm(model) {
      await (await acquire()).warm(settingsOf(model, null));
    },
    close() {
      for (const r of pool) r.close();
    },
  };
}

export class WhisperError extends Error {
  /** The audio itself could not be decoded (the runner's decoder said so): another try reads the same bytes. */
  readonly undecodable: boolean;

  constructor(
    message: string,
    /** The runner's own message, when it reported one (e.g. undecodable audio). */
    readonly runnerMessage: string | null,
  ) {
    super(message);
    this.name = 'WhisperError';
    // the runner reports `ExceptionName: text`; PyAV's and the decoder's words for bad input
    this.undecodable = runnerMessage !== null && /Invalid data|could not decode|EOF|InvalidDataError/i.test(runnerMessage);
  }
}

/** The runner script, in the source tree (dist/ holds compiled JS only). */
export function runnerPath(): string {
  return path.join(projectRoot, 'engines', 'speech', 'whisper_runner.py');
}

/** Name of the per-segment decoder figures written beside a speech job's output. */
export const DECODING_FILE = 'decoding.json';
