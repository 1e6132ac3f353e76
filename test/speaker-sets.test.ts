// Speaker labels judged on voices they were not tuned to: the `test` set of test/speakers/sets.py
// (13 conversations of 2–4 voices: 8 of one sex, 10 with voices of recorded people, among them
// three real men's recordings), none of them seen when diarize.py's constants were chosen on the
// `dev` set. Each conversation goes through the transcribe step with the real faster-whisper and the
// CAM++ encoder, as a job runs it; test/speakers/evaluate.py scores the service's words (each with
// its speaker) and its labelled segments: words on the right speaker under the best mapping, the
// count, and the diarization error rate from pyannote.metrics with a 0.25 s collar on each side.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Recognition } from '../activities/speech/recognition';
import { LocalStorage } from '../engines/storage';
import { loadConfig } from '../lib/config';
import type { JobOutput } from '../lib/job-reports';
import type { TranscribeParams } from '../operations/transcribe/spec';
import { activityEnv } from './helpers/activity-env';
import { SPEAKER_SETS_DIR, speakerSet, turnAt, type SetConversation } from './helpers/speaker-sets';
import { speechSteps } from './helpers/speech-steps';

const run = promisify(execFile);

interface Scored {
  name: string;
  speakers: number;
  found: number;
  count_right: boolean;
  words: number;
  word_accuracy: number;
  der: number;
  confusion_s: number;
  missed_s: number;
  false_alarm_s: number;
}
interface LabelledJson {
  speakers: { speaker: string; seconds: number }[];
  segments: { start: number; end: number; speaker: string; words?: { word: string; start: number; end: number; speaker: string }[] }[];
}

/**
 * Conversations known to fall short of the 85 % floor, and why; kept in the set and in its overall
 * figures. Each is checked to still fall short, so one the service learns to separate is taken off.
 */
const SHORT_OF_THE_FLOOR: Record<string, string> = {
  // one espeak-ng voice (m7, the same pitch and speed) with two accents' rules: to the encoder one
  // speaker (its sentences 0.83-0.88 alike across the accents, as alike as one accent's own)
  'test-male-accent': 'one synthetic voice in two accents',
};

/** Known speakers: five pairs of the test set, each with a reference of a voice that is not in it. */
const KNOWN: { conversation: string; voices: string[]; absent: string }[] = [
  { conversation: 'test-awb-rms', voices: ['flite-awb', 'flite-rms'], absent: 'flite-slt' },
  { conversation: 'test-rms-slt', voices: ['flite-rms', 'flite-slt'], absent: 'flite-awb' },
  { conversation: 'test-awb-slt', voices: ['flite-awb', 'flite-slt'], absent: 'es-gb-f1' },
  { conversation: 'test-female-pair', voices: ['es-gb-f1', 'es-029-f3'], absent: 'flite-slt' },
  { conversation: 'test-awb-m7', voices: ['flite-awb', 'es-us-m7'], absent: 'flite-rms' },
];

describe('speaker labels on voices they were not tuned to (the test set: recorded people, same-sex pairs, 2–4 voices)', function () {
  const config = loadConfig({ ...process.env, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-speaker-sets-')) });
  const storage = new LocalStorage(config);
  const { speech, activities } = speechSteps(config, storage);
  let conversations: SetConversation[] = [];
  let references: Record<string, string> = {};
  const outputs: Record<string, LabelledJson> = {};
  let n = 0;

  before(async function () {
    this.timeout(600_000);
    // the reference clips of the named voices (all synthetic: the real recordings have none left over for one)
    const named = [...new Set(KNOWN.flatMap((k) => [...k.voices, k.absent]))];
    ({ conversations, references } = await speakerSet(config.whisperPython, 'test', named));
  });
  after(() => {
    speech.whisper.close();
    fs.rmSync(config.dataDir, { recursive: true, force: true });
  });

  function stage(file: string, jobId: string, slot = ''): string {
    const rel = path.join('download', slot, path.basename(file));
    fs.mkdirSync(path.join(storage.workDirOf(jobId), 'download', slot), { recursive: true });
    fs.symlinkSync(file, path.join(storage.workDirOf(jobId), rel));
    return rel;
  }
  const newJob = () => `00000000-0000-4000-8002-${String(++n).padStart(12, '0')}`;

  const params = (p: Partial<TranscribeParams> = {}): TranscribeParams => ({ url: 'http://x/', language: 'en', output_format: 'json', word_timestamps: true, model_size: 'base', diarize: true, num_speakers: null, known_speakers: [], multichannel: false, webhook_url: null, ...p });

  /** The whole set's figures from the service's outputs, by test/speakers/evaluate.py. */
  async function score(): Promise<{ conversations: Scored[]; summary: { word_accuracy: number; worst_word_accuracy: number; count_right: number; conversations: number; der: number } }> {
    const file = path.join(config.dataDir, 'outputs.json');
    const given = Object.fromEntries(
      Object.entries(outputs).map(([name, out]) => [name, { words: out.segments.flatMap((s) => s.words ?? []), turns: out.segments.map((s) => [s.start, s.end, s.speaker]) }]),
    );
    fs.writeFileSync(file, JSON.stringify(given));
    const { stdout } = await run(config.whisperPython, [path.join(SPEAKER_SETS_DIR, 'evaluate.py'), 'test', '--turns', file, '--json'], { maxBuffer: 16 * 1024 * 1024 });
    return JSON.parse(stdout);
  }

  it('the test set is what it says: at least 12 conversations of 2–4 voices, 4 of one sex, 4 with recorded people, none of it in the dev set', async function () {
    this.timeout(120_000);
    assert.ok(conversations.length >= 12, `${conversations.length} conversations`);
    assert.ok(conversations.every((c) => c.speakers >= 2 && c.speakers <= 4));
    assert.ok(conversations.filter((c) => c.same_sex).length >= 4);
    assert.ok(conversations.filter((c) => c.recorded >= 2).length >= 4);
    assert.ok(conversations.filter((c) => c.real_people >= 2).length >= 3, 'conversations of real people only');
    const dev = (await speakerSet(config.whisperPython, 'dev')).conversations;
    const devVoices = new Set(dev.flatMap((c) => c.voices));
    // no recorded person of the test set is heard in the dev set, and no conversation is in both
    assert.deepEqual(conversations.flatMap((c) => c.voices).filter((v) => devVoices.has(v) && /^(flite-|librivox|jfk|an4-)/.test(v)), []);
    assert.deepEqual(dev.map((c) => c.name).filter((name) => conversations.some((c) => c.name === name)), []);
  });

  it('the number not given: at least 90 % of words on the right speaker overall and 85 % in every conversation (but those listed short of it), the count right in 10 of 12, DER at most 15 %', async function () {
    this.timeout(1_800_000);
    for (const conv of conversations) {
      const jobId = newJob();
      const out = (await activityEnv().run(activities.transcribe, { jobId, sourceFile: stage(conv.file, jobId), params: params(), progressRange: [15, 99] as [number, number] })) as JobOutput;
      outputs[conv.name] = JSON.parse(fs.readFileSync(storage.outputPath(out.outputFile), 'utf8')) as LabelledJson;
      assert.equal(out.resultData?.speaker_count, outputs[conv.name]!.speakers.length);
    }
    const scored = await score();
    const lines = scored.conversations.map((r) => `${r.name}: ${r.speakers} voices, ${r.found} found, ${(100 * r.word_accuracy).toFixed(1)} % of ${r.words} words right, DER ${(100 * r.der).toFixed(1)} % (confusion ${r.confusion_s.toFixed(1)} s, missed ${r.missed_s.toFixed(1)} s, false alarm ${r.false_alarm_s.toFixed(1)} s)`);
    const s = scored.summary;
    console.log(`      the test set, measured:\n${lines.map((l) => `        ${l}`).join('\n')}\n        in all: ${(100 * s.word_accuracy).toFixed(1)} % of words right (worst ${(100 * s.worst_word_accuracy).toFixed(1)} %), the count right in ${s.count_right} of ${s.conversations}, DER ${(100 * s.der).toFixed(1)} %`);
    assert.ok(s.word_accuracy >= 0.9, `${(100 * s.word_accuracy).toFixed(1)} % of words right overall`);
    assert.ok(s.count_right >= Math.ceil((10 / 12) * s.conversations), `the count right in ${s.count_right} of ${s.conversations}`);
    assert.ok(s.der <= 0.15, `DER ${(100 * s.der).toFixed(1)} %`);
    const short = scored.conversations.filter((r) => r.word_accuracy < 0.85);
    assert.deepEqual(short.filter((r) => !(r.name in SHORT_OF_THE_FLOOR)).map((r) => `${r.name}: ${(100 * r.word_accuracy).toFixed(1)} %`), []);
    assert.deepEqual(Object.keys(SHORT_OF_THE_FLOOR).filter((name) => !short.some((r) => r.name === name)), [], 'a conversation listed as short of the floor now reaches it: take it off the list');
  });

  it('known speakers: names land on their voices in at least 4 of 5 pairs, and a reference of a voice not in the recording names no one', async function () {
    this.timeout(900_000);
    const figures: string[] = [];
    let landed = 0;
    for (const { conversation, voices, absent } of KNOWN) {
      const conv = conversations.find((c) => c.name === conversation)!;
      const jobId = newJob();
      const sourceFile = stage(conv.file, jobId);
      const named = [...voices, absent];
      const refs = named.map((voice, i) => ({ name: voice, sourceFile: stage(references[voice]!, jobId, `speaker-${i}`) }));
      const p = params({ diarize: false, known_speakers: named.map((voice) => ({ name: voice, url: `http://x/${voice}` })) });
      const recognition = (await activityEnv().run(activities.recognizeSpeech, { jobId, sourceFile, request: { kind: 'transcribe' as const, params: p }, progressRange: [15, 99] as [number, number], references: refs })) as Recognition;
      const out = (await activityEnv().run(activities.writeTranscript, { jobId, params: p, recognition })) as JobOutput;
      const json = JSON.parse(fs.readFileSync(storage.outputPath(out.outputFile), 'utf8')) as LabelledJson;
      const words = json.segments.flatMap((s) => s.words ?? []);
      const voiceAt = (t: number) => turnAt(conv, t).voice;
      // a name landed when its voice's words carry it (at least 85 % of them) and few others do
      const results = voices.map((voice) => {
        const mine = words.filter((w) => voiceAt((w.start + w.end) / 2) === voice);
        const carried = mine.filter((w) => w.speaker === voice).length;
        const stray = words.filter((w) => w.speaker === voice && voiceAt((w.start + w.end) / 2) !== voice).length;
        return { voice, share: carried / Math.max(mine.length, 1), stray };
      });
      const ok = results.every((r) => r.share >= 0.85 && r.stray <= 0.15 * words.length);
      if (ok) landed++;
      figures.push(`${conversation}: ${results.map((r) => `${r.voice} on ${(100 * r.share).toFixed(0)} % of its words (${r.stray} elsewhere)`).join(', ')}; ${absent} (absent) ${json.speakers.some((s) => s.speaker === absent) ? 'NAMED' : 'named no one'}`);
      assert.ok(!json.speakers.some((s) => s.speaker === absent), `${conversation}: the absent ${absent} was named: ${JSON.stringify(json.speakers)}`);
    }
    console.log(`      known speakers, measured:\n${figures.map((f) => `        ${f}`).join('\n')}`);
    assert.ok(landed >= 4, `names landed in ${landed} of ${KNOWN.length} pairs`);
  });
});
