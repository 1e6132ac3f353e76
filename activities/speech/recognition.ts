// Speech recognition, the step transcribe and translate share (faster-whisper, media-speech queue),
// and the toolkit their own steps write their files with: the recognition read back, the output file
// and the decoder's figures beside it, and the result_data fields both report.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { FfmpegEngine } from '../../engines/ffmpeg/ffmpeg.engine';
import { localLibavOptions } from '../../engines/ffmpeg/input-policy';
import { speechAudioRecipe, speechChannelRecipe } from '../../engines/ffmpeg/recipes/audio';
import { ModelSelectionError, type ModelChoice } from '../../engines/speech/model-registry';
import { toSrt, toVtt, type Cue } from '../../engines/speech/subtitles';
import { DECODING_FILE, WhisperError, type WhisperResult, type SpeechSamples, type WhisperRunRequest, type WhisperSegment } from '../../engines/speech/whisper.engine';
import type { SpeechEngines } from '../../engines/speech/services';
import { planSpeechTranslation, targetsFromAnySpeech } from '../../engines/translate/speech-plan';
import type { Storage } from '../../engines/storage';
import type { Config } from '../../lib/config';
import { JobFailure } from '../../lib/job-failure';
import { diarizes, REFERENCE_SECONDS, type SpeechOutputFormat, type TranscribeParams } from '../../operations/transcribe/spec';
import type { TranslateParams } from '../../operations/translate/spec';
import { alive, keepAlive, progressReporter, segmentReporter } from '../step/heartbeat';
import { labelSpeakers, mergeChannels, speakersOfLabelled, wordJoiner, type SpeakerTotal } from './speakers';

/** multichannel recognises each channel on its own: more than this many is not a call recording. */
const MAX_CHANNELS = 8;
import { probeDownloaded } from '../step/media-probe';

export interface SpeechDeps extends SpeechEngines {
  ffmpeg: FfmpegEngine;
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
  /** Known speakers' reference clips, fetched beside the source (relative to the job's work folder). */
  references?: SpeakerReference[];
}

export interface SpeakerReference {
  name: string;
  sourceFile: string;
}

/** A finished recognition: Whisper's result in the job's work folder, and what it cost. */
export interface Recognition {
  /** Whisper's result JSON, relative to the job's work folder. */
  resultFile: string;
  /** The model that ran (e.g. "tiny.en"). */
  model: string;
  /** Seconds of audio decoding, model load and recognition. */
  seconds: number;
  /** Seconds of audio. */
  duration: number;
}

/** The one-step form of transcribe and translate, which workflows started before speech-steps-v1 still call. */
export interface SpeechInput<P> {
  jobId: string;
  /** Downloaded source, relative to the job's work folder. */
  sourceFile: string;
  params: P;
  progressRange: [number, number];
}

/** The shared recognition step for the `media-speech` queue. */
export function createRecognitionActivities(deps: SpeechDeps) {
  const { whisper, ffmpeg, registry, translator, storage, config } = deps;

  /**
   * The source's audio as the runner reads it: the fetched file, which the runner decodes to 16 kHz
   * mono as it reads (nothing on disk), or a 16 kHz mono PCM WAV in the job's work folder when
   * the probe gives no length (progress and batching go by it) and, with `perChannel`, one per channel
   * of its first audio track.
   */
  async function speechAudio(jobId: string, sourceFile: string, perChannel: boolean): Promise<(string | SpeechSamples)[]> {
    const src = await storage.workFile(jobId, sourceFile);
    const probe = await probeDownloaded(ffmpeg, src);
    const audio = probe.streams.find((s) => s.codec_type === 'audio');
    if (!audio) throw JobFailure.user('unavailable', 'The source has no audio track to transcribe');
    // the runner's result goes here too
    const dir = path.join(storage.workDirOf(jobId), 'speech');
    await fs.mkdir(dir, { recursive: true });
    const seconds = probe.format.duration ?? Number(audio.duration ?? NaN);
    if (!perChannel && seconds > 0) return [{ file: src, options: localLibavOptions(), seconds }];
    const signal = Context.current().cancellationSignal;
    if (!perChannel) {
      const wav = path.join(dir, 'audio.wav');
      await alive(() => ffmpeg.run({ args: speechAudioRecipe(src, wav), signal }));
      return [wav];
    }
    const channels = Math.max(1, audio.channels ?? 1);
    if (channels > MAX_CHANNELS) throw JobFailure.user('rejected', `multichannel recognises each channel on its own, at most ${MAX_CHANNELS}; this source's audio has ${channels}`);
    const wavs: string[] = [];
    for (let c = 0; c < channels; c++) {
      const wav = path.join(dir, `channel-${c}.wav`);
      await alive(() => ffmpeg.run({ args: speechChannelRecipe(src, c, wav), signal }));
      wavs.push(wav);
    }
    return wavs;
  }

  function choose(size: TranscribeParams['model_size'], language: string | null): ModelChoice {
    try {
      return registry.select(size, language);
    } catch (err) {
      if (err instanceof ModelSelectionError) throw JobFailure.user('rejected', err.message);
      throw err;
    }
  }

  /** Each known speaker's clip as 16 kHz WAV, refused (naming it) unless it is 2–10 s long. */
  async function referenceAudio(jobId: string, references: SpeakerReference[]): Promise<{ name: string; audio: string }[]> {
    const out: { name: string; audio: string }[] = [];
    for (const [i, ref] of references.entries()) {
      const field = `known_speakers.${i} ("${ref.name}")`;
      const src = await storage.workFile(jobId, ref.sourceFile);
      const probe = await probeDownloaded(ffmpeg, src);
      if (!probe.streams.some((s) => s.codec_type === 'audio')) throw JobFailure.user('rejected', `${field}: the reference clip has no audio`);
      const seconds = probe.format.duration ?? 0;
      const [min, max] = REFERENCE_SECONDS;
      if (seconds < min || seconds > max) throw JobFailure.user('rejected', `${field}: the reference clip is ${seconds.toFixed(1)} s long; give ${min}–${max} s of that voice alone`);
      const wav = path.join(storage.workDirOf(jobId), 'speech', `reference-${i}.wav`);
      await fs.mkdir(path.dirname(wav), { recursive: true });
      await alive(() => ffmpeg.run({ args: speechAudioRecipe(src, wav), signal: Context.current().cancellationSignal }));
      out.push({ name: ref.name, audio: wav });
    }
    return out;
  }

  async function recognise(audio: string | SpeechSamples, choice: ModelChoice, opts: { language: string | null; tasks: ('transcribe' | 'translate')[]; words: boolean; skip?: string[]; diarize?: WhisperRunRequest['diarize']; output: string; report: (f: number) => void }): Promise<WhisperResult> {
    const stop = keepAlive();
    try {
      return await whisper.run({
        model: choice.model,
        allowDownload: choice.download,
        downloadRoot: choice.download ? path.join(config.dataDir, 'models') : undefined,
        audio,
        language: opts.language,
        tasks: opts.tasks,
        translateSkipLanguages: opts.skip,
        wordTimestamps: opts.words,
        diarize: opts.diarize,
        output: opts.output,
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

  /** What recognition needs for a request: the model, Whisper's passes, and languages whose English pass can be skipped. */
  function recognitionPlan(request: SpeechRequest) {
    // absent on jobs started before speaker labels
    const diarize = diarizes(request.params) ? { numSpeakers: request.params.num_speakers ?? null } : undefined;
    if (request.kind === 'transcribe') {
      const p = request.params;
      return { choice: choose(p.model_size, p.language), language: p.language, tasks: ['transcribe'] as ('transcribe' | 'translate')[], words: p.word_timestamps && p.output_format === 'json', skip: [] as string[], diarize };
    }
    const p = request.params;
    const target = p.target_language;
    const pairs = translator.pairs();
    const known = p.source_language ? planSpeechTranslation(pairs, p.source_language, target) : null;
    if (p.source_language && !known) throw noTranslationPath(p.source_language, target, pairs.length ? targetsFromAnySpeech(pairs) : ['en']);
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
      diarize,
    };
  }

  return {
    /**
     * Speech → timed text: the source's audio as 16 kHz WAV, then faster-whisper. The result stays in
     * the job's work folder, so a retry of the step after it (writing, translating) does not redo it.
     */
    async recognizeSpeech(input: RecognizeInput): Promise<Recognition> {
      const started = performance.now();
      const plan = recognitionPlan(input.request);
      const report = progressReporter(input.progressRange);
      // absent on jobs started before speaker labels
      const perChannel = input.request.params.multichannel === true;
      const audios = await speechAudio(input.jobId, input.sourceFile, perChannel);
      report(0.03);
      const known = input.references?.length ? await referenceAudio(input.jobId, input.references) : [];
      const diarize = plan.diarize && { ...plan.diarize, knownSpeakers: known };
      const output = path.join(storage.workDirOf(input.jobId), 'speech', 'whisper.json');
      const results: WhisperResult[] = [];
      for (const [c, audio] of audios.entries()) {
        const own = perChannel ? path.join(path.dirname(output), `whisper-channel-${c}.json`) : output;
        results.push(await recognise(audio, plan.choice, { language: plan.language, tasks: plan.tasks, words: plan.words, skip: plan.skip, diarize, output: own, report: (f) => report(0.03 + (0.97 * (c + f)) / audios.length) }));
      }
      const result = perChannel ? mergeChannels(results) : results[0]!;
      const refused = result.reference_problems?.map((p) => `known_speakers.${p.index} ("${known[p.index]?.name ?? '?'}"): the reference clip ${p.problem}`);
      if (refused?.length) throw JobFailure.user('rejected', refused.join('; '));
      if (perChannel) await fs.writeFile(output, JSON.stringify(result));
      const resultFile = path.relative(storage.workDirOf(input.jobId), output);
      // the writing and translating steps read it, perhaps on another machine
      await storage.shareWorkFile(input.jobId, resultFile);
      return { resultFile, model: plan.choice.name, seconds: (performance.now() - started) / 1000, duration: result.duration };
    },
  };
}

/** Whisper's result, read back by the step after recognition (perhaps on another machine). */
export async function readRecognition(storage: Storage, jobId: string, recognition: Recognition): Promise<WhisperResult> {
  return JSON.parse(await fs.readFile(await storage.workFile(jobId, recognition.resultFile), 'utf8')) as WhisperResult;
}

/**
 * The job's output file (JSON, SRT or VTT from the cues), and beside it the decoder's figures per
 * segment (tokens, log-probability…): the contract's file has no place for them, and the
 * OpenAI-compatible routes' verbose_json shows them. Returns the output's path relative to the files.
 */
export async function writeSpeechFiles(storage: Storage, jobId: string, out: { format: SpeechOutputFormat; json: unknown; cues: Cue[]; segments: WhisperSegment[] }): Promise<string> {
  const write = async (name: string, body: string) => {
    const relative = storage.outputRelative(jobId, name);
    const file = storage.outputPath(relative);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, body, 'utf8');
    await storage.commitOutput(relative);
    return relative;
  };
  const outputFile = await write(`output.${out.format}`, out.format === 'json' ? `${JSON.stringify(out.json, null, 2)}\n` : out.format === 'srt' ? toSrt(out.cues) : toVtt(out.cues));
  await write(DECODING_FILE, JSON.stringify({ segments: out.segments.map((s) => s.decoding ?? null) }));
  return outputFile;
}

/** The result_data fields every speech job reports: the audio, the language detection, and the recognition's cost. */
export function speechResultFields(result: WhisperResult, recognition: Recognition, segmentCount: number, outputFormat: SpeechOutputFormat, stepStarted: number) {
  const seconds = recognition.seconds + (performance.now() - stepStarted) / 1000;
  return {
    duration: result.duration,
    segment_count: segmentCount,
    output_format: outputFormat,
    language_probability: result.language_probability,
    language_candidates: result.language_candidates,
    realtime_factor: round2(result.duration / seconds),
    processing_seconds: round2(seconds),
    model: recognition.model,
  };
}

/**
 * The recognised segments of the first pass, labelled with speakers when the job asked for them
 * (split where the speaker changes); null speakers otherwise.
 */
export function recognisedSegments(result: WhisperResult, params: { diarize?: boolean; multichannel?: boolean; known_speakers?: { name: string }[] }): { segments: WhisperSegment[]; speakers: SpeakerTotal[] | null } {
  const segments = result.passes.transcribe?.segments ?? [];
  // one speaker per channel: labelled when the channels were merged
  if (params.multichannel) return { segments, speakers: speakersOfLabelled(segments) };
  if (!diarizes(params)) return { segments, speakers: null };
  return labelSpeakers(segments, result.speaker_turns ?? [], wordJoiner(result.language), result.speaker_names);
}

/** Segment texts as one text. */
export function joinText(parts: string[]): string {
  return parts
    .map((t) => t.trim())
    .filter(Boolean)
    .join(' ');
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

export function noTranslationPath(source: string, target: string, fromAny: string[]): JobFailure {
  return JobFailure.user('rejected', `No translation path from "${source}" to "${target}" on this server; any speech can be translated into: ${fromAny.join(', ')} (GET /v1/languages lists every pair)`);
}
