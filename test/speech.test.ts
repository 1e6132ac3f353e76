import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alignByTime } from '../activities/speech/alignment';
import { inspectModelDir, ModelRegistry, ModelSelectionError } from '../engines/speech/model-registry';
import { toSrt, toVtt } from '../engines/speech/subtitles';
import { localLibavOptions } from '../engines/ffmpeg/input-policy';
import { createWhisperEngine, WhisperError, type SpeechSamples } from '../engines/speech/whisper.engine';
import { createApertiumEngine, modesToPairs } from '../engines/translate/apertium.engine';
import { planSpeechTranslation } from '../engines/translate/speech-plan';
import { planRoute, reachablePairs, translateRoute, type LanguagePair } from '../engines/translate/translation-engine';
import { loadConfig, projectRoot } from '../lib/config';
import type { JobOutput } from '../lib/job-reports';
import type { TranscribeParams } from '../operations/transcribe/spec';
import type { TranslateParams } from '../operations/translate/spec';
import { LocalStorage } from '../engines/storage';
import { activityEnv } from './helpers/activity-env';
import { waitFor } from './helpers/processes';
import { speechSteps } from './helpers/speech-steps';
import { EXPECTED, SPEECH_DIR } from './helpers/speech-fixtures';
import { assertMonotonic, parseSrtStrict, parseVttStrict, wordErrorRate } from './helpers/subtitles';

/** Processes (pid and command line) whose command line holds the text. */
function processesNaming(text: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', '--', text]).toString().trim().split('\n').filter((l) => l && !l.includes('pgrep'));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Processes holding the file open. */
function processesReading(file: string): number[] {
  const out: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readdirSync(`/proc/${pid}/fd`).some((fd) => fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === file)) out.push(Number(pid));
    } catch {
      // ended while we looked, or not ours to read
    }
  }
  return out;
}


/** Prints how the runner's decode of a file (argv 1) compares with ffmpeg's 16 kHz mono WAV of it (argv 2). */
const SAME_SAMPLES_PY = `
import json, sys, wave
import numpy as np
sys.path.insert(0, sys.argv[3])
import av
import whisper_runner
container = av.open(sys.argv[1])
ours = np.concatenate(list(whisper_runner.pcm_blocks(container, container.streams.audio[0]))).astype(np.int32)
with wave.open(sys.argv[2]) as w:
    theirs = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.int32)
n = min(len(ours), len(theirs))
print(json.dumps({"ours": len(ours), "theirs": len(theirs), "max_step": int(np.max(np.abs(ours[:n] - theirs[:n]))) if n else -1}))
`;

describe('speech: model registry, Apertium and the faster-whisper activities', function () {
  const config = loadConfig({ ...process.env, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-speech-')) });
  const storage = new LocalStorage(config);
  // the media-speech worker's steps, as workers/queues.ts builds them
  const { services, activities } = speechSteps(config, storage);
  let n = 0;

  after(() => fs.rmSync(config.dataDir, { recursive: true, force: true }));

  /** Puts a shared recording where downloadSource would have left it; returns the relative path. */
  function stage(file: string, dir = SPEECH_DIR): { jobId: string; sourceFile: string } {
    const jobId = `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    const rel = path.join('download', file);
    fs.mkdirSync(path.join(storage.workDirOf(jobId), 'download'), { recursive: true });
    fs.symlinkSync(path.join(dir, file), path.join(storage.workDirOf(jobId), rel));
    return { jobId, sourceFile: rel };
  }

  async function transcribe(file: string, p: Partial<TranscribeParams>, progress: number[] = [], dir = SPEECH_DIR) {
    const { jobId, sourceFile } = stage(file, dir);
    const params: TranscribeParams = { url: 'http://x/', language: null, output_format: 'json', word_timestamps: true, model_size: 'base', diarize: false, num_speakers: null, known_speakers: [], multichannel: false, webhook_url: null, ...p };
    const out = (await activityEnv((v) => progress.push(v)).run(activities.transcribe, { jobId, sourceFile, params, progressRange: [15, 99] as [number, number] })) as JobOutput;
    return { out, body: fs.readFileSync(storage.outputPath(out.outputFile), 'utf8'), jobId };
  }

  async function translate(file: string, p: Partial<TranslateParams>) {
    const { jobId, sourceFile } = stage(file);
    const params: TranslateParams = { url: 'http://x/', target_language: 'es', source_language: null, output_format: 'json', model_size: 'base', diarize: false, num_speakers: null, known_speakers: [], multichannel: false, webhook_url: null, ...p };
    const out = (await activityEnv().run(activities.translate, { jobId, sourceFile, params, progressRange: [15, 99] as [number, number] })) as JobOutput;
    return { out, body: fs.readFileSync(storage.outputPath(out.outputFile), 'utf8') };
  }

  describe('model registry', () => {
    it('finds the installed PyPI models and reads size and English-only from model.bin', () => {
      const models = services.registry.list();
      const tiny = models.find((m) => m.name === 'tiny.en');
      const base = models.find((m) => m.name === 'base');
      assert.ok(tiny, `tiny.en installed: ${JSON.stringify(models)}`);
      assert.ok(base, `base installed: ${JSON.stringify(models)}`);
      assert.equal(tiny.englishOnly, true);
      assert.equal(base.englishOnly, false);
      assert.deepEqual(services.registry.servedSizes(), ['tiny', 'base']);
    });

    it('refuses uninstalled sizes naming the installed ones, and English-only models for other languages', () => {
      assert.throws(() => services.registry.select('small', null), (e: Error) => e instanceof ModelSelectionError && /"small" is not installed/.test(e.message) && /tiny \(English-only, tiny\.en\), base/.test(e.message));
      assert.throws(() => services.registry.select('tiny', null), /English-only model tiny\.en, which serves language "en" only/);
      assert.throws(() => services.registry.select('tiny', 'fr'), /English-only/);
      assert.equal(services.registry.select('tiny', 'en').name, 'tiny.en');
      assert.equal(services.registry.select('base', 'en').name, 'base');
    });

    it('takes extra model folders from a setting and ignores truncated models', () => {
      const extra = fs.mkdtempSync(path.join(os.tmpdir(), 'models-'));
      try {
        const tiny = services.registry.list().find((m) => m.name === 'tiny.en')!;
        const copy = path.join(extra, 'my-tiny');
        fs.mkdirSync(copy);
        for (const f of ['model.bin', 'config.json', 'tokenizer.json', 'vocabulary.txt']) fs.symlinkSync(path.join(tiny.dir, f), path.join(copy, f));
        const broken = path.join(extra, 'broken');
        fs.mkdirSync(broken);
        const fd = fs.openSync(path.join(tiny.dir, 'model.bin'), 'r');
        const head = Buffer.alloc(4 << 20);
        fs.readSync(fd, head, 0, head.length, 0);
        fs.closeSync(fd);
        fs.writeFileSync(path.join(broken, 'model.bin'), head);
        for (const f of ['config.json', 'tokenizer.json']) fs.copyFileSync(path.join(tiny.dir, f), path.join(broken, f));
        assert.equal(inspectModelDir(broken), null, 'a model.bin cut short is not a model');
        const reg = new ModelRegistry({ venvDir: path.join(extra, 'no-venv'), extraDirs: [extra], autoDownload: false });
        assert.deepEqual(reg.list().map((m) => [m.name, m.dir]), [['tiny.en', copy]]);
        assert.deepEqual(reg.servedSizes(), ['tiny']);
        const auto = new ModelRegistry({ venvDir: path.join(extra, 'no-venv'), extraDirs: [], autoDownload: true });
        assert.deepEqual(auto.servedSizes(), ['tiny', 'base', 'small', 'medium']);
        assert.deepEqual(auto.select('small', null), { model: 'small', name: 'small', englishOnly: false, download: true });
      } finally {
        fs.rmSync(extra, { recursive: true, force: true });
      }
    });
  });

  describe('translation routes', () => {
    const pairs: LanguagePair[] = [
      { from: 'fr', to: 'es' },
      { from: 'es', to: 'en' },
      { from: 'en', to: 'es' },
      { from: 'is', to: 'en' },
      { from: 'es', to: 'pt' },
      { from: 'pt', to: 'gl' },
      { from: 'fr', to: 'en' },
    ];
    it('prefers a direct pair, then English as pivot, then the shortest path; null when none', () => {
      assert.deepEqual(planRoute(pairs, 'fr', 'es'), ['fr', 'es']);
      assert.deepEqual(planRoute(pairs, 'is', 'es'), ['is', 'en', 'es']);
      assert.deepEqual(planRoute(pairs, 'fr', 'gl'), ['fr', 'es', 'pt', 'gl']);
      assert.equal(planRoute(pairs, 'gl', 'fr'), null);
      assert.deepEqual(planSpeechTranslation(pairs, 'de', 'pt'), { kind: 'whisper+text', route: ['en', 'es', 'pt'] });
      assert.deepEqual(planSpeechTranslation(pairs, 'de', 'en'), { kind: 'whisper' });
      assert.equal(planSpeechTranslation(pairs, 'de', 'ja'), null);
    });

    it('maps the installed Apertium modes to more than 50 directed pairs', () => {
      const direct = services.translator.pairs();
      assert.ok(direct.some((p) => p.from === 'en' && p.to === 'es'));
      assert.ok(direct.length >= 50, `direct pairs: ${direct.length}`);
      assert.ok(reachablePairs(direct).length > 50);
      assert.deepEqual(
        modesToPairs(['eng-spa.mode', 'spa-eng.mode', 'eng-hbs_HR.mode', 'eng-cat_valencia.mode', 'en-eo-bytecode.mode']).map((m) => `${m.pair.from}>${m.pair.to}:${m.mode}`),
        ['en>hr:eng-hbs_HR', 'en>es:eng-spa', 'es>en:spa-eng'],
      );
    });

    it('translates text through a pivot with the real Apertium, keeping one line per segment', async () => {
      const route = planRoute(services.translator.pairs(), 'gl', 'ca');
      assert.deepEqual(route, ['gl', 'en', 'ca'], 'Galician → English → Catalan');
      const out = await translateRoute(services.translator, ['O meu país é grande.', 'Bos días.'], route!);
      assert.equal(out.length, 2);
      assert.match(out[0]!, /país/);
      const none = createApertiumEngine({ binary: 'apertium', modesDir: '/nonexistent' });
      assert.deepEqual(none.pairs(), []);
    });

    it('aligns a second segmentation to the original segments by overlap', () => {
      const orig = [{ start: 0, end: 4 }, { start: 4, end: 8 }, { start: 9, end: 10 }];
      assert.deepEqual(alignByTime(orig, [{ start: 0, end: 3, text: 'a' }, { start: 3.5, end: 7, text: 'b' }, { start: 7, end: 8, text: 'c' }]), ['a', 'b c', '']);
    });
  });

  describe('subtitle writers', () => {
    it('write strict SRT and VTT with monotonic timings', () => {
      const cues = [{ start: 0, end: 1.5, text: 'one' }, { start: 1.5, end: 3661.0016, text: 'two\n\nlines' }, { start: 4000, end: 4000, text: '  ' }];
      const srt = parseSrtStrict(toSrt(cues));
      assert.deepEqual(srt.map((c) => [c.start, c.end, c.text]), [[0, 1.5, 'one'], [1.5, 3661.002, 'two\nlines']]);
      assert.match(toSrt(cues), /^1\n00:00:00,000 --> 00:00:01,500\none\n\n2\n00:00:01,500 --> 01:01:01,002\n/);
      const vtt = parseVttStrict(toVtt(cues));
      assertMonotonic(vtt);
      assert.equal(vtt.length, 2);
      assert.throws(() => parseSrtStrict('1\n00:00:00.000 --> 00:00:01,000\nx\n'), /bad timing/);
      assert.throws(() => parseVttStrict('1\n00:00:00.000 --> 00:00:01.000\nx\n'), /WEBVTT/);
    });
  });

  describe('transcription (real faster-whisper, int8, offline)', () => {
    it('jfk.wav with base: the reference text within 10% WER, language en with top-3 candidates, words inside segments', async () => {
      const progress: number[] = [];
      const { out, body, jobId } = await transcribe('jfk.wav', { model_size: 'base' }, progress);
      // the runner read the samples from ffmpeg as it decoded them: no copy of the audio was written
      assert.deepEqual(fs.readdirSync(path.join(storage.workDirOf(jobId), 'speech')), ['whisper.json']);
      const json = JSON.parse(body) as { text: string; language: string; segments: { start: number; end: number; text: string; words: { word: string; start: number; end: number; probability: number }[] }[] };
      assert.deepEqual(Object.keys(json), ['text', 'language', 'segments']);
      assert.equal(json.language, 'en');
      const wer = wordErrorRate(EXPECTED['jfk.wav']!.text!, json.text);
      assert.ok(wer <= 0.1, `WER ${wer}: ${json.text}`);
      assert.ok(json.segments.length >= 1);
      for (const s of json.segments) {
        assert.deepEqual(Object.keys(s), ['start', 'end', 'text', 'words']);
        assert.ok(s.end > s.start && s.words.length > 0);
        for (const w of s.words) {
          assert.deepEqual(Object.keys(w), ['word', 'start', 'end', 'probability']);
          assert.ok(w.start >= s.start && w.end <= s.end && w.end >= w.start, `word ${JSON.stringify(w)} inside segment ${s.start}–${s.end}`);
          assert.ok(w.probability >= 0 && w.probability <= 1);
        }
      }
      const rd = out.resultData;
      assert.equal(rd.language, 'en');
      assert.equal(rd.text, json.text);
      assert.equal(rd.segment_count, json.segments.length);
      assert.equal(rd.output_format, 'json');
      assert.ok(Math.abs((rd.duration as number) - 11) < 0.1);
      assert.ok((rd.realtime_factor as number) > 0);
      assert.equal(rd.model, 'base');
      const cands = rd.language_candidates as { language: string; probability: number }[];
      assert.equal(cands.length, 3);
      assert.equal(cands[0]!.language, 'en');
      assert.equal(rd.language_probability, cands[0]!.probability);
      assert.ok(cands[0]!.probability >= cands[1]!.probability && cands[1]!.probability >= cands[2]!.probability);
      assert.ok(progress.length >= 2 && progress.at(-1)! >= 95, `progress ${progress.join(',')}`);
      assert.deepEqual([...progress].sort((a, b) => a - b), progress, 'progress only grows');
    });

    it('an engine warmed with a model has it loaded before its first job: the job loads nothing and decodes as usual', async () => {
      const whisper = createWhisperEngine({ python: config.whisperPython });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-warm-'));
      try {
        const base = services.registry.select('base', null).model;
        await whisper.warm(base);
        const res = await whisper.run({ model: base, audio: path.join(SPEECH_DIR, 'jfk.wav'), language: null, tasks: ['transcribe'], wordTimestamps: true, output: path.join(dir, 'out.json') });
        assert.ok(res.timings.load_s! < 0.05, `the job spent ${res.timings.load_s} s loading the model`);
        const text = res.passes.transcribe!.segments.map((s) => s.text).join(' ');
        const wer = wordErrorRate(EXPECTED['jfk.wav']!.text!, text);
        assert.ok(wer <= 0.1, `WER ${wer}: ${text}`);
      } finally {
        whisper.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('reads audio in sections at quiet moments, also audio that is not 16 kHz mono and a WAV shorter than its header says', async () => {
      const whisper = createWhisperEngine({ python: config.whisperPython, sectionSeconds: 10 });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-sections-'));
      try {
        const base = services.registry.select('base', null).model;
        // jfk.wav three times over (33 s) at 44.1 kHz stereo: decoded whole, then cut into sections
        const stereo = path.join(dir, 'jfk-x3-44k.wav');
        execFileSync('ffmpeg', ['-v', 'error', '-stream_loop', '2', '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-ar', '44100', '-ac', '2', stereo]);
        // the same as the job's 16 kHz mono WAV, cut off after two of the three (22 s) with its header still saying 33 s
        const cut = path.join(dir, 'jfk-x3-cut.wav');
        execFileSync('ffmpeg', ['-v', 'error', '-stream_loop', '2', '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', '-fflags', '+bitexact', cut]);
        fs.truncateSync(cut, 44 + 22 * 16000 * 2 + 1); // and inside a sample
        for (const [audio, times] of [[stereo, 3], [cut, 2]] as const) {
          const res = await whisper.run({ model: base, audio, language: null, tasks: ['transcribe'], wordTimestamps: true, output: path.join(dir, 'out.json') });
          const segments = res.passes.transcribe!.segments;
          const text = segments.map((s) => s.text).join(' ');
          assert.ok((res.sections ?? 0) >= 2, `${path.basename(audio)}: ${res.sections} sections`);
          assert.equal(res.language, 'en');
          // the recording as many times as it was said: nothing lost or doubled at a section's edge
          const wer = wordErrorRate(Array(times).fill(EXPECTED['jfk.wav']!.text!).join(' '), text);
          assert.ok(wer <= 0.15, `${path.basename(audio)}: WER ${wer}: ${text}`);
          assertMonotonic(segments);
          segments.forEach((s, i) => assert.equal(s.decoding?.id, i + 1, `ids run on across sections: ${JSON.stringify(segments.map((x) => x.decoding?.id))}`));
        }
      } finally {
        whisper.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it("decodes a batch's windows with each encoded and aligned on its own, and the VAD a stretch at a time: the batch's text, words and speech", () => {
      // the runner's lean working memory against faster-whisper as it comes, in one Python process on the same audio
      const check = `
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import whisper_runner as runner
from faster_whisper import BatchedInferencePipeline, WhisperModel
from faster_whisper.audio import decode_audio
from faster_whisper.vad import VadOptions, get_speech_timestamps, get_vad_model
audio = np.tile(decode_audio(sys.argv[3]), 6)
def run(model):
    segments, _ = BatchedInferencePipeline(model).transcribe(audio, batch_size=3, without_timestamps=True, word_timestamps=True, beam_size=5, vad_filter=True)
    segments = list(segments)
    speech = get_speech_timestamps(audio, VadOptions())
    frames = np.pad(audio, (0, -len(audio) % 512))
    return {"text": [s.text for s in segments], "words": [[w.word, w.start, w.end] for s in segments for w in s.words], "speech": speech, "probs": get_vad_model()(frames).ravel().tolist()}
model = WhisperModel(sys.argv[2], device="cpu", compute_type="int8", local_files_only=True)
plain = run(model)
runner.lean_working_memory(model)
print(json.dumps({"plain": plain, "lean": run(model), "vad_frames": get_vad_model().session.frames}))
`;
      const base = services.registry.select('base', null).model;
      const out = JSON.parse(execFileSync(config.whisperPython, ['-c', check, path.join(projectRoot, 'engines/speech'), base, path.join(SPEECH_DIR, 'jfk.wav')], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, maxBuffer: 64 * 1024 * 1024 }).toString()) as {
        plain: { text: string[]; words: [string, number, number][]; speech: unknown[]; probs: number[] };
        lean: { text: string[]; words: [string, number, number][]; speech: unknown[]; probs: number[] };
        vad_frames: number;
      };
      // 66 s of speech: three windows a batch, and 2,063 VAD frames, so both work in more than one piece
      assert.ok(out.plain.text.length >= 3 && out.vad_frames * 2 < out.plain.probs.length, `${out.plain.text.length} windows, ${out.plain.probs.length} VAD frames`);
      assert.deepEqual(out.lean.text, out.plain.text);
      assert.deepEqual(out.lean.speech, out.plain.speech);
      assert.equal(out.lean.probs.length, out.plain.probs.length);
      assert.ok(out.lean.probs.every((p, i) => Math.abs(p - out.plain.probs[i]!) < 1e-4), 'VAD probabilities differ');
      assert.deepEqual(out.lean.words.map((w) => w[0]), out.plain.words.map((w) => w[0]));
      // a word's times may move by one 20 ms step of the alignment: a matrix product of one window rounds a little otherwise
      const moved = out.lean.words.filter((w, i) => Math.abs(w[1] - out.plain.words[i]![1]) > 0.021 || Math.abs(w[2] - out.plain.words[i]![2]) > 0.021);
      assert.deepEqual(moved, [], `words moved: ${JSON.stringify(moved)}`);
    });

    it('decodes the source itself as it reads it, no ffmpeg beside it and nothing on disk: a cancel mid-run stops the runner, and the next run is whole', async () => {
      const whisper = createWhisperEngine({ python: config.whisperPython, sectionSeconds: 20 });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-stream-'));
      try {
        // jfk.wav 14 times over (154 s) as AAC: read in sections of about 20 s, each decoded as the runner reaches it
        const source = path.join(dir, 'jfk-x14.m4a');
        execFileSync('ffmpeg', ['-v', 'error', '-stream_loop', '13', '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-c:a', 'aac', '-b:a', '64k', source]);
        const audio = { file: source, options: localLibavOptions(), seconds: 154 };
        const model = services.registry.select('tiny', 'en').model;
        const request = { model, audio, language: 'en', tasks: ['transcribe' as const], wordTimestamps: true, output: path.join(dir, 'out.json') };

        const abort = new AbortController();
        let readers: number[] = [];
        let readerCommand = '';
        let tools: string[] = [];
        const cancelled = whisper.run({
          ...request,
          signal: abort.signal,
          onProgress: (f) => {
            if (f < 0.2 || abort.signal.aborted) return;
            readers = processesReading(source);
            readerCommand = readers.map((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')).join(' | ');
            tools = processesNaming(source);
            abort.abort();
          },
        });
        await assert.rejects(cancelled, /cancelled/);
        assert.equal(readers.length, 1, `processes reading the source mid-run: ${readers.join(', ')}`);
        assert.match(readerCommand, /whisper_runner\.py\0--serve/, 'the warm runner reads the source');
        assert.deepEqual(tools, [], 'no decoder process beside the runner');
        // the runner that was cancelled is gone (a fresh one takes its place)
        await waitFor('the cancelled runner to stop', async () => !fs.existsSync(`/proc/${readers[0]}`) || undefined, 15_000, 100).catch(() => undefined);
        assert.ok(!fs.existsSync(`/proc/${readers[0]}`), `runner ${readers[0]} still running after the cancel`);

        const progress: number[] = [];
        const res = await whisper.run({ ...request, onProgress: (f) => progress.push(f) });
        const segments = res.passes.transcribe!.segments;
        assert.ok(Math.abs(res.duration - 154) < 0.2, `duration ${res.duration}`);
        assert.ok((res.sections ?? 0) >= 6, `${res.sections} sections`);
        const wer = wordErrorRate(Array(14).fill(EXPECTED['jfk.wav']!.text!).join(' '), segments.map((s) => s.text).join(' '));
        assert.ok(wer <= 0.15, `WER ${wer}`);
        assert.ok(segments.every((s) => (s.words?.length ?? 0) > 0), 'every segment has its words');
        assertMonotonic(segments);
        assert.ok(segments.at(-1)!.end > 150, `the last segment ends at ${segments.at(-1)!.end} s of 154`);
        assert.ok(progress.length >= 10 && progress.at(-1) === 1, `progress ${progress.length} values, last ${progress.at(-1)}`);
        assert.deepEqual([...progress].sort((a, b) => a - b), progress, 'progress only grows');
        assert.deepEqual(processesReading(source), [], 'the source closed with the run');
        assert.deepEqual(fs.readdirSync(dir).sort(), ['jfk-x14.m4a', 'out.json'], 'nothing decoded to disk');
      } finally {
        whisper.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it("decodes Opus in WebM (platforms' audio) and in Ogg, and an MP4 with its index at the end, to ffmpeg's 16 kHz samples of them (one 16-bit step apart at most), the same words, at the same times (median within 20 ms, 9 in 10 within 100 ms)", async () => {
      const whisper = createWhisperEngine({ python: config.whisperPython, batchSize: 2, batchFromSeconds: 30 });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-formats-'));
      try {
        const model = services.registry.select('base', 'en').model;
        const jfk = path.join(SPEECH_DIR, 'jfk.wav');
        const sources = {
          'jfk-x4.webm': ['-stream_loop', '3', '-i', jfk, '-c:a', 'libopus', '-b:a', '32k'],
          // Ogg: the decoder under PyAV drops the header's whole pre-skip itself, so the runner drops nothing more
          'jfk-x4.opus': ['-stream_loop', '3', '-i', jfk, '-c:a', 'libopus', '-b:a', '32k'],
          // no +faststart: the index is written after the samples
          'jfk-x4.mp4': ['-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=5', '-stream_loop', '3', '-i', jfk, '-shortest', '-c:v', 'libx264', '-c:a', 'aac'],
        };
        for (const [name, args] of Object.entries(sources)) {
          const source = path.join(dir, name);
          execFileSync('ffmpeg', ['-v', 'error', ...args, source]);
          const wav = path.join(dir, `${name}.wav`);
          execFileSync('ffmpeg', ['-v', 'error', '-i', source, '-map', '0:a:0', '-ac', '1', '-ar', '16000', wav]);
          // the runner's own decode: as many samples as ffmpeg's, each within one step (the resamplers round apart)
          const samples = JSON.parse(execFileSync(config.whisperPython, ['-c', SAME_SAMPLES_PY, source, wav, path.join(projectRoot, 'engines/speech')], { encoding: 'utf8' })) as { ours: number; theirs: number; max_step: number };
          assert.equal(samples.ours, samples.theirs, `${name}: ${samples.ours} samples decoded, ffmpeg's ${samples.theirs}`);
          assert.ok(samples.max_step <= 1, `${name}: samples ${samples.max_step} steps from ffmpeg's`);
          const words = async (audio: string | SpeechSamples) => {
            const res = await whisper.run({ model, audio, language: 'en', tasks: ['transcribe'], wordTimestamps: true, output: path.join(dir, 'out.json') });
            return res.passes.transcribe!.segments.flatMap((s) => s.words ?? []);
          };
          const decoded = await words({ file: source, options: localLibavOptions(), seconds: 44 });
          const reference = await words(wav);
          // a sample one step apart may tip a batch's punctuation or capitals: the words themselves are compared
          const plain = (ws: { word: string }[]) => ws.map((w) => w.word.toLowerCase().replace(/[^\p{L}\p{N}']/gu, ''));
          assert.deepEqual(plain(decoded), plain(reference), `${name}: other words`);
          // the same samples to a step, but a word's alignment can tip by whole words on one numeric backend
          // and not another (CTranslate2 uses MKL on Intel only): the median, and the share within 100 ms
          const apart = decoded.map((w, i) => Math.abs(w.start - reference[i]!.start)).sort((a, b) => a - b);
          const median = apart[Math.floor(apart.length / 2)]!;
          const within = apart.filter((d) => d <= 0.1).length / apart.length;
          assert.ok(median <= 0.02 && within >= 0.9, `${name}: words ${median.toFixed(3)} s apart at the median, ${(100 * within).toFixed(0)} % within 100 ms (the farthest ${apart.at(-1)!.toFixed(3)} s)`);
        }
      } finally {
        whisper.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('opens a source under the input guard: a container the service does not read (Creative Voice, which libav opens unguarded) is refused as undecodable', async () => {
      const whisper = createWhisperEngine({ python: config.whisperPython });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-guard-'));
      try {
        const source = path.join(dir, 'source.m4a');
        execFileSync('ffmpeg', ['-v', 'error', '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-f', 'voc', source]);
        const model = services.registry.select('tiny', 'en').model;
        const err = await whisper
          .run({ model, audio: { file: source, options: localLibavOptions(), seconds: 11 }, language: 'en', tasks: ['transcribe'], wordTimestamps: false, output: path.join(dir, 'out.json') })
          .then(() => null, (e: unknown) => e);
        assert.ok(err instanceof WhisperError, `rejected with ${String(err)}`);
        assert.ok(err.undecodable, `not reported as undecodable: ${err.runnerMessage}`);
      } finally {
        whisper.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a source whose container does not state its length (Matroska written to a pipe) has it measured from its packets, and is decoded as any other', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-no-length-'));
      try {
        // written to a pipe, the muxer cannot go back to write the duration: ffprobe reports none
        fs.writeFileSync(path.join(dir, 'jfk.mkv'), execFileSync('ffmpeg', ['-v', 'error', '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-c:a', 'libopus', '-f', 'matroska', 'pipe:1']));
        const probe = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=duration', '-of', 'json', path.join(dir, 'jfk.mkv')]).toString()) as { format: { duration?: string }; streams: { duration?: string }[] };
        assert.equal(probe.format.duration ?? probe.streams[0]?.duration, undefined, 'the fixture has no length');
        const { out, jobId } = await transcribe('jfk.mkv', { model_size: 'base', word_timestamps: false }, [], dir);
        // the measured length lets the runner decode the file itself: no WAV beside it
        assert.deepEqual(fs.readdirSync(path.join(storage.workDirOf(jobId), 'speech')).sort(), ['whisper.json']);
        const wer = wordErrorRate(EXPECTED['jfk.wav']!.text!, out.resultData.text as string);
        assert.ok(wer <= 0.1, `WER ${wer}: ${String(out.resultData.text)}`);
        assert.ok(Math.abs((out.resultData.duration as number) - 11) < 0.2, `duration ${String(out.resultData.duration)}`);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('french.aiff is detected as French', async () => {
      const { out, body } = await transcribe('french.aiff', { model_size: 'base', output_format: 'json', word_timestamps: false });
      const json = JSON.parse(body) as { language: string; text: string; segments: object[] };
      assert.equal(json.language, 'fr');
      assert.equal(out.resultData.language, 'fr');
      assert.match(json.text.toLowerCase(), /dictée/);
      for (const s of json.segments) assert.ok(!('words' in s), 'word_timestamps false: no words');
    });

    it('SRT (tiny.en, English given) and VTT (base) pass strict parsers with monotonic timings', async () => {
      const srt = await transcribe('jfk.wav', { model_size: 'tiny', language: 'en', output_format: 'srt' });
      assert.equal(srt.out.resultData.model, 'tiny.en');
      assert.equal(srt.out.resultData.output_format, 'srt');
      const cues = parseSrtStrict(srt.body);
      assertMonotonic(cues);
      assert.ok(wordErrorRate(EXPECTED['jfk.wav']!.text!, cues.map((c) => c.text).join(' ')) <= 0.15);
      const vtt = await transcribe('english.wav', { model_size: 'base', output_format: 'vtt' });
      const vcues = parseVttStrict(vtt.body);
      assertMonotonic(vcues);
      assert.match(vcues.map((c) => c.text).join(' ').toLowerCase(), /one|1/);
      assert.ok(vcues.at(-1)!.end <= 3);
    });
  });

  describe('translation (Whisper and Apertium)', () => {
    it('jfk into Spanish (English → Spanish, direct pair): Spanish text, segments aligned one to one', async () => {
      const { out, body } = await translate('jfk.wav', { target_language: 'es', source_language: 'en', model_size: 'tiny' });
      const json = JSON.parse(body) as { source_language: string; target_language: string; original_text: string; translated_text: string; segments: { start: number; end: number; original: string; text: string }[] };
      assert.deepEqual(Object.keys(json), ['source_language', 'target_language', 'original_text', 'translated_text', 'segments']);
      assert.equal(json.source_language, 'en');
      assert.equal(json.target_language, 'es');
      assert.match(json.translated_text, /país/);
      assert.ok(wordErrorRate(EXPECTED['jfk.wav']!.text!, json.original_text) <= 0.15);
      assert.equal(json.segments.map((s) => s.original).join(' '), json.original_text);
      assert.equal(json.segments.map((s) => s.text).join(' '), json.translated_text);
      assert.deepEqual(out.resultData.translation_route, ['en', 'es']);
      assert.equal(out.resultData.translation_engine, 'apertium');
      assert.equal(out.resultData.segment_count, json.segments.length);
    });

    it('jfk into Portuguese goes the shortest path through installed pairs (no en→pt pair); SRT holds the translation', async () => {
      const { out, body } = await translate('jfk.wav', { target_language: 'pt', model_size: 'base', output_format: 'srt' });
      assert.equal(out.resultData.source_language, 'en');
      const route = out.resultData.translation_route as string[];
      assert.equal(route.length, 3, `route ${route.join('→')}`);
      assert.deepEqual([route[0], route[2]], ['en', 'pt']);
      const cues = parseSrtStrict(body);
      assertMonotonic(cues);
      assert.match(cues.map((c) => c.text).join(' '), /país/);
      assert.equal(cues.map((c) => c.text).join(' '), out.resultData.translated_text);
    });

    it('French speech into English uses Whisper\'s own speech translation', async () => {
      const { out, body } = await translate('french.aiff', { target_language: 'en', model_size: 'base', output_format: 'vtt' });
      assert.equal(out.resultData.source_language, 'fr');
      assert.equal(out.resultData.translation_engine, 'whisper');
      const text = out.resultData.translated_text as string;
      assert.notEqual(text, out.resultData.original_text);
      assert.doesNotMatch(text.toLowerCase(), /dictée|numéro/);
      assertMonotonic(parseVttStrict(body));
    });
  });
});
