import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { FfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import { speechAudioRecipe } from '../engines/ffmpeg/recipes/audio';
import { ModelSelectionError, type ModelChoice, type ModelRegistry } from '../engines/speech/model-registry';
import { toSrt, toVtt, type Cue } from '../engines/speech/subtitles';
import type { WhisperEngine, WhisperResult, WhisperSegment } from '../engines/speech/whisper.engine';
import { DECODING_FILE, WhisperError } from '../engines/speech/whisper.engine';
import { planSpeechTranslation, targetsFromAnySpeech } from '../engines/translate/speech-plan';
import { translateRoute, type TranslationEngine } from '../engines/translate/translation-engine';
import type { Storage } from '../engines/storage';
import type { Config } from '../lib/config';
import { JobFailure } from '../lib/job-failure';
import type { JobOutput } from '../jobs/types';
import type { SpeechOutputFormat, TranscribeParams } from '../operations/transcribe/spec';
import type { TranslateParams } from '../operations/translate/spec';
import { alive, keepAlive, progressReporter, segmentReporter } from './heartbeat';
import { probeDownloaded } from './media-probe';

export interface SpeechDeps {
  whisper: WhisperEngine;
  ffmpeg: FfmpegEngine;
  registry: ModelRegistry;
  translator: TranslationEngine;
  storage: Storage;
  config: Pick<Config, 'dataDir'>;
}

/** What is to be recognised: a transcription, or the first half of a translation. */
export type SpeechRequest = { kind: 'transcribe'; params: TranscribeParams } | { kind: 'translate'; params: TranslateParams };

export interface RecognizeInput {
  jobId: string;
  /** Downloaded source, relative to the job's work folder. */
  sourceFile: string;
  request: SpeechRequest;
  progressRange: [number, number];
}

/** A finished recognition: Whisper's result in the job's work folder, and what it cost. */
export interface Recognition {
  /** Whisper's result JSON, relative to the job's work folder. */
  resultFile: string;
  /** The model that ran (e.g. "tiny.en"). */
  model: string;
  /** Seconds of WAV extraction, model load and decoding. */
  seconds: number;
  /** Seconds of audio. */
  duration: number;
}

export interface SpeechInput<P> {
  jobId: string;
  /** Downloaded source, relative to the job's work folder. */
  sourceFile: string;
  params: P;
  progressRange: [number, number];
}

/** faster-whisper (+ Apertium) activities for the `media-speech` queue. */
export function createSpeechActivities(deps: SpeechDeps) {
  const { whisper, ffmpeg, registry, translator, storage, config } = deps;

  /** 16 kHz mono PCM WAV of the source's audio, in the job's work folder. */
  async function extractAudio(jobId: string, sourceFile: string): Promise<string> {
    const src = await storage.workFile(jobId, sourceFile);
    const probe = await probeDownloaded(ffmpeg, src);
    if (!probe.streams.some((s) => s.codec_type === 'audio')) {
      throw JobFailure.user('unavailable', 'The source has no audio track to transcribe');
    }
    const wav = path.join(storage.workDirOf(jobId), 'speech', 'audio.wav');
    await fs.mkdir(path.dirname(wav), { recursive: true });
    await alive(() => ffmpeg.run({ args: speechAudioRecipe(src, wav), signal: Context.current().cancellationSignal }));
    return wav;
  }

  function choose(size: TranscribeParams['model_size'], language: string | null): ModelChoice {
    try {
      return registry.select(size, language);
    } catch (err) {
      if (err instanceof ModelSelectionError) throw JobFailure.user('rejected', err.message);
      throw err;
    }
  }

  async function recognise(
    jobId: string,
    wav: string,
    choice: ModelChoice,
    opts: { language: string | null; tasks: ('transcribe' | 'translate')[]; words: boolean; skip?: string[]; report: (f: number) => void },
  ): Promise<WhisperResult> {
    const stop = keepAlive();
    try {
      return await whisper.run({
        model: choice.model,
        allowDownload: choice.download,
        downloadRoot: choice.download ? path.join(config.dataDir, 'models') : undefined,
        audio: wav,
        language: opts.language,
        tasks: opts.tasks,
        translateSkipLanguages: opts.skip,
        wordTimestamps: opts.words,
        output: path.join(path.dirname(wav), 'whisper.json'),
        signal: Context.current().cancellationSignal,
        onProgress: opts.report,
        onSegment: segmentReporter(),
      });
    } catch (err) {
      if (err instanceof WhisperError && err.undecodable) {
        throw JobFailure.user('unavailable', `The audio could not be decoded: ${err.runnerMessage}`);
      }
      throw err;
    } finally {
      stop();
    }
  }

  async function writeOutput(jobId: string, format: SpeechOutputFormat, json: unknown, cues: Cue[]): Promise<string> {
    const relative = storage.outputRelative(jobId, `output.${format}`);
    const out = storage.outputPath(relative);
    await fs.mkdir(path.dirname(out), { recursive: true });
    const body = format === 'json' ? `${JSON.stringify(json, null, 2)}\n` : format === 'srt' ? toSrt(cues) : toVtt(cues);
    await fs.writeFile(out, body, 'utf8');
    await storage.commitOutput(relative);
    return relative;
  }

  /**
   * The decoder's figures per segment (tokens, log-probability…), beside the output: the contract's
   * file has no place for them, and the OpenAI-compatible routes' verbose_json shows them.
   */
  async function writeDecoding(jobId: string, segments: WhisperSegment[]): Promise<void> {
    const relative = storage.outputRelative(jobId, DECODING_FILE);
    const out = storage.outputPath(relative);
    await fs.mkdir(path.dirname(out), { recursive: true });
    await fs.writeFile(out, JSON.stringify({ segments: segments.map((s) => s.decoding ?? null) }), 'utf8');
    await storage.commitOutput(relative);
  }

  /** What recognition needs for a request: the model, Whisper's passes, and languages whose English pass can be skipped. */
  function recognitionPlan(request: SpeechRequest) {
    if (request.kind === 'transcribe') {
      const p = request.params;
      return { choice: choose(p.model_size, p.language), language: p.language, tasks: ['transcribe'] as ('transcribe' | 'translate')[], words: p.word_timestamps && p.output_format === 'json', skip: [] as string[] };
    }
    const p = request.params;
    const target = p.target_language;
    const pairs = translator.pairs();
    const known = p.source_language ? planSpeechTranslation(pairs, p.source_language, target) : null;
    if (p.source_language && !known) throw noPath(p.source_language, target, pairs.length ? targetsFromAnySpeech(pairs) : ['en']);
    // Whisper's speech translation (→ English) runs in the same model load when it may be needed;
    // it is skipped for languages that need none (the target itself, or a text route exists).
    const needsWhisperEnglish = (lang: string) => {
      const plan = planSpeechTranslation(pairs, lang, target);
      return plan?.kind === 'whisper' || plan?.kind === 'whisper+text';
    };
    const mayNeedWhisper = known ? needsWhisperEnglish(p.source_language!) : true;
    const choice = choose(p.model_size, p.source_language);
    return {
      choice,
      language: p.source_language,
      tasks: (mayNeedWhisper && !choice.englishOnly ? ['transcribe', 'translate'] : ['transcribe']) as ('transcribe' | 'translate')[],
      words: false,
      skip: known ? [] : ['en', target, ...new Set(pairs.map((q) => q.from).filter((l) => !needsWhisperEnglish(l)))],
    };
  }

  async function readRecognition(jobId: string, recognition: Recognition): Promise<WhisperResult> {
    return JSON.parse(await fs.readFile(await storage.workFile(jobId, recognition.resultFile), 'utf8')) as WhisperResult;
  }

  const steps = {
    /**
     * Speech → timed text: the source's audio as 16 kHz WAV, then faster-whisper. The result stays in
     * the job's work folder, so a retry of the step after it (writing, translating) does not redo it.
     */
    async recognizeSpeech(input: RecognizeInput): Promise<Recognition> {
      const started = performance.now();
      const plan = recognitionPlan(input.request);
      const report = progressReporter(input.progressRange);
      const wav = await extractAudio(input.jobId, input.sourceFile);
      report(0.03);
      const result = await recognise(input.jobId, wav, plan.choice, { language: plan.language, tasks: plan.tasks, words: plan.words, skip: plan.skip, report: (f) => report(0.03 + 0.97 * f) });
      const resultFile = path.relative(storage.workDirOf(input.jobId), path.join(path.dirname(wav), 'whisper.json'));
      // the writing and translating steps read it, perhaps on another machine
      await storage.shareWorkFile(input.jobId, resultFile);
      return { resultFile, model: plan.choice.name, seconds: (performance.now() - started) / 1000, duration: result.duration };
    },

    /** The transcript file (JSON with words, SRT or VTT) and result_data, from the recognition. */
    async writeTranscript(input: { jobId: string; params: TranscribeParams; recognition: Recognition }): Promise<JobOutput> {
      const started = performance.now();
      const p = input.params;
      const result = await readRecognition(input.jobId, input.recognition);
      const words = p.word_timestamps && p.output_format === 'json';
      const segments = result.passes.transcribe?.segments ?? [];
      const text = joinText(segments.map((s) => s.text));
      const json = {
        text,
        language: result.language,
        segments: segments.map((s) => ({ start: s.start, end: s.end, text: s.text, ...(words ? { words: s.words ?? [] } : {}) })),
      };
      const outputFile = await writeOutput(input.jobId, p.output_format, json, segments);
      await writeDecoding(input.jobId, segments);
      const seconds = input.recognition.seconds + (performance.now() - started) / 1000;
      return {
        outputFile,
        resultData: {
          language: result.language,
          text,
          duration: result.duration,
          segment_count: segments.length,
          output_format: p.output_format,
          language_probability: result.language_probability,
          language_candidates: result.language_candidates,
          realtime_factor: round2(result.duration / seconds),
          processing_seconds: round2(seconds),
          model: input.recognition.model,
        },
      };
    },

    /** Text translation of the recognised segments (Whisper's English and/or Apertium), aligned one to one, and the file. */
    async translateTranscript(input: { jobId: string; params: TranslateParams; recognition: Recognition; progressRange: [number, number] }): Promise<JobOutput> {
      const started = performance.now();
      const p = input.params;
      const target = p.target_language;
      const pairs = translator.pairs();
      const result = await readRecognition(input.jobId, input.recognition);
      const source = result.language;
      const plan = planSpeechTranslation(pairs, p.source_language ?? source, target);
      if (!plan) throw noPath(source, target, targetsFromAnySpeech(pairs));
      const segments = result.passes.transcribe?.segments ?? [];
      const originals = segments.map((s) => s.text);
      const signal = Context.current().cancellationSignal;
      const report = progressReporter(input.progressRange);
      let texts: string[];
      let engine: string;
      let route: string[];
      if (plan.kind === 'same') {
        texts = originals;
        engine = 'none';
        route = [source];
      } else if (plan.kind === 'text') {
        texts = await alive(() => translateRoute(translator, originals, plan.route, signal));
        engine = translator.name;
        route = plan.route;
      } else {
        const english = alignByTime(segments, result.passes.translate?.segments ?? []);
        texts = plan.kind === 'whisper' ? english : await alive(() => translateRoute(translator, english, plan.route, signal));
        engine = plan.kind === 'whisper' ? 'whisper' : `whisper+${translator.name}`;
        route = plan.kind === 'whisper' ? [source, 'en'] : [source, ...plan.route];
      }
      report(1);
      const aligned = segments.map((s, i) => ({ start: s.start, end: s.end, original: s.text, text: texts[i] ?? '' }));
      const originalText = joinText(originals);
      const translatedText = joinText(texts);
      const json = { source_language: source, target_language: target, original_text: originalText, translated_text: translatedText, segments: aligned };
      const outputFile = await writeOutput(input.jobId, p.output_format, json, aligned);
      await writeDecoding(input.jobId, segments);
      const seconds = input.recognition.seconds + (performance.now() - started) / 1000;
      return {
        outputFile,
        resultData: {
          source_language: source,
          target_language: target,
          original_text: originalText,
          translated_text: translatedText,
          duration: result.duration,
          segment_count: segments.length,
          output_format: p.output_format,
          language_probability: result.language_probability,
          language_candidates: result.language_candidates,
          translation_engine: engine,
          translation_route: route,
          realtime_factor: round2(result.duration / seconds),
          processing_seconds: round2(seconds),
          model: input.recognition.model,
        },
      };
    },
  };

  return {
    ...steps,

    /** Speech → text in one step; workflows started before speech-steps-v1 still call it. */
    async transcribe(input: SpeechInput<TranscribeParams>): Promise<JobOutput> {
      const [from, to] = input.progressRange;
      const recognition = await steps.recognizeSpeech({ jobId: input.jobId, sourceFile: input.sourceFile, request: { kind: 'transcribe', params: input.params }, progressRange: [from, to] });
      return steps.writeTranscript({ jobId: input.jobId, params: input.params, recognition });
    },

    /** Speech → text in another language in one step; workflows started before speech-steps-v1 still call it. */
    async translate(input: SpeechInput<TranslateParams>): Promise<JobOutput> {
      const [from, to] = input.progressRange;
      const mid = from + (to - from) * 0.93;
      const recognition = await steps.recognizeSpeech({ jobId: input.jobId, sourceFile: input.sourceFile, request: { kind: 'translate', params: input.params }, progressRange: [from, mid] });
      return steps.translateTranscript({ jobId: input.jobId, params: input.params, recognition, progressRange: [mid, to] });
    },
  };
}

/**
 * One text per original segment from a second segmentation of the same audio (Whisper's English
 * translation pass): each translated segment goes to the original segment it overlaps most.
 */
export function alignByTime(originals: Pick<WhisperSegment, 'start' | 'end'>[], other: Pick<WhisperSegment, 'start' | 'end' | 'text'>[]): string[] {
  const buckets: string[][] = originals.map(() => []);
  if (originals.length === 0) return [];
  for (const seg of other) {
    let best = -1;
    let bestScore = -Infinity;
    originals.forEach((o, i) => {
      const overlap = Math.min(o.end, seg.end) - Math.max(o.start, seg.start);
      // no overlap: the nearest segment (negative distance) still wins over nothing
      if (overlap > bestScore) {
        bestScore = overlap;
        best = i;
      }
    });
    buckets[best]!.push(seg.text);
  }
  return buckets.map((b) => joinText(b));
}

function joinText(parts: string[]): string {
  return parts
    .map((t) => t.trim())
    .filter(Boolean)
    .join(' ');
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

function noPath(source: string, target: string, fromAny: string[]): JobFailure {
  return JobFailure.user('rejected', `No translation path from "${source}" to "${target}" on this server; any speech can be translated into: ${fromAny.join(', ')} (GET /v1/languages lists every pair)`);
}
