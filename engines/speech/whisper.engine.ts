// faster-whisper behind a small interface: spawns engines/speech/whisper_runner.py (in the
// project's virtualenv) like ffmpeg, reads its progress lines and its JSON result.
import fs from 'node:fs/promises';
import path from 'node:path';
import { projectRoot } from '../../lib/config';
import { runProcess } from '../child-process';

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
}

export interface WhisperRunRequest {
  /** Model folder, or a size name when downloading is allowed. */
  model: string;
  allowDownload?: boolean;
  downloadRoot?: string;
  audio: string;
  /** ISO 639-1, or null to detect from the first 30 s of speech. */
  language: string | null;
  /** `translate` is Whisper's own speech → English translation. The first pass detects the language. */
  tasks: ('transcribe' | 'translate')[];
  /** Skip a later translate pass when the detected language is one of these. */
  translateSkipLanguages?: string[];
  wordTimestamps: boolean;
  /** Where the runner writes its result JSON. */
  output: string;
  signal?: AbortSignal;
  /** Fraction 0..1 of all passes, from seconds of audio done. */
  onProgress?: (fraction: number) => void;
}

export interface WhisperEngine {
  run(req: WhisperRunRequest): Promise<WhisperResult>;
}

export interface WhisperEngineOptions {
  python: string;
  /** Threads for CTranslate2; 0 = one per core. */
  cpuThreads?: number;
  beamSize?: number;
}


export function createWhisperEngine(opts: WhisperEngineOptions): WhisperEngine {
  return {
    async run(req) {
      const payload = {
        model: req.model,
        allow_download: req.allowDownload ?? false,
        download_root: req.downloadRoot ?? null,
        audio: req.audio,
        language: req.language,
        tasks: req.tasks,
        translate_skip_languages: req.translateSkipLanguages ?? [],
        word_timestamps: req.wordTimestamps,
        output: req.output,
        compute_type: 'int8',
        cpu_threads: opts.cpuThreads ?? 0,
        beam_size: opts.beamSize ?? 5,
      };
      // Offline unless downloading was explicitly allowed: nothing may reach a model hub.
      const env = { ...process.env, HF_HUB_OFFLINE: req.allowDownload ? '0' : '1', HF_HUB_DISABLE_TELEMETRY: '1', TOKENIZERS_PARALLELISM: 'false' };
      let error: string | null = null;
      const res = await runProcess(opts.python, {
        args: [runnerPath(), JSON.stringify(payload)],
        env,
        signal: req.signal,
        onLine: (line, stream) => {
          if (stream !== 'stdout' || !line.startsWith('{')) return;
          let ev: { event?: string; pass?: number; passes?: number; done?: number; total?: number; message?: string };
          try {
            ev = JSON.parse(line) as typeof ev;
          } catch {
            return;
          }
          if (ev.event === 'progress' && ev.total) {
            req.onProgress?.(((ev.pass ?? 0) + (ev.done ?? 0) / ev.total) / (ev.passes ?? 1));
          } else if (ev.event === 'error') {
            error = ev.message ?? 'unknown error';
          }
        },
      });
      if (req.signal?.aborted) throw new Error('whisper cancelled');
      if (res.code !== 0) {
        const tail = res.stderr.trim().split('\n').slice(-3).join(' | ');
        throw new WhisperError(`faster-whisper failed: ${error ?? `exit code ${res.code}`}${!error && tail ? ` (${tail})` : ''}`, error);
      }
      return JSON.parse(await fs.readFile(req.output, 'utf8')) as WhisperResult;
    },
  };
}

export class WhisperError extends Error {
  constructor(
    message: string,
    /** The runner's own message, when it reported one (e.g. undecodable audio). */
    readonly runnerMessage: string | null,
  ) {
    super(message);
    this.name = 'WhisperError';
  }
}

/** The runner script, in the source tree (dist/ holds compiled JS only). */
export function runnerPath(): string {
  return path.join(projectRoot, 'engines', 'speech', 'whisper_runner.py');
}
