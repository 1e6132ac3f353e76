// Test conversations with known speakers and turn times: each turn two sentences spoken by one of
// four distinct espeak-ng voices (Debian's espeak-ng; a voice and a pitch each), turns apart by
// 0.3–0.8 s of silence, 16 kHz mono WAV. Deterministic per seed, cached in the temp folder.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { wavHeader } from './wav';

const run = promisify(execFile);
const RATE = 16000;

const SENTENCES = [
  'The weather report says it will rain again tomorrow afternoon.',
  'I think we should move the meeting to Thursday morning instead.',
  'Did you finish reading the report about the new budget?',
  'Yes, and the numbers look better than last quarter.',
  'Let me check my calendar before I promise anything.',
  'The train was late again so I walked the last mile.',
  'We need three more volunteers for the weekend event.',
  'My sister just moved to a small town near the coast.',
  'Could you send me the slides after the call?',
  'The project deadline is at the end of next month.',
  'I prefer coffee in the morning and tea in the evening.',
  'Our team won the match on Saturday by two goals.',
  'Please remember to lock the door when you leave.',
  'The library opens at nine and closes at six.',
  'They are building a new bridge across the river.',
  'I lost my keys somewhere in the parking lot.',
];

/**
 * espeak-ng voice, pitch and words per minute. Chosen as four mutually distinct voices: whole
 * utterances of two of them are at most 0.76 alike to the speaker encoder, one voice with itself
 * 0.93 or more (two espeak male voices that differ only in pitch and accent are 0.88 alike, as
 * alike as some people's phrases are to each other; they are not used together).
 */
export const VOICES = [
  { voice: 'en-us+m3', pitch: 45, speed: 150 },
  { voice: 'en+f3', pitch: 75, speed: 165 },
  { voice: 'en+klatt', pitch: 50, speed: 160 },
  { voice: 'en+f5', pitch: 60, speed: 175 },
] as const;

export interface Turn {
  start: number;
  end: number;
  /** Index into VOICES. */
  speaker: number;
  text: string;
}

export interface Conversation {
  file: string;
  speakers: number;
  turns: Turn[];
  duration: number;
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function speak(text: string, speaker: number, dir: string, n: number): Promise<Buffer> {
  const v = VOICES[speaker]!;
  const wav = path.join(dir, `turn-${n}.wav`);
  await run('espeak-ng', ['-v', v.voice, '-p', String(v.pitch), '-s', String(v.speed), '-w', wav, text]);
  const { stdout } = await run('ffmpeg', ['-loglevel', 'error', '-i', wav, '-ar', String(RATE), '-ac', '1', '-f', 's16le', '-'], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** `turns` turns among `speakers` voices: each voice speaks first in order, then a random other voice each turn. */
export async function conversation(speakers: number, turns: number, seed: number): Promise<Conversation> {
  const dir = path.join(os.tmpdir(), 'mediasvc-conversations-v1');
  const file = path.join(dir, `conv-${speakers}-${turns}-${seed}.wav`);
  const facts = `${file}.json`;
  if (fs.existsSync(file) && fs.existsSync(facts)) return JSON.parse(fs.readFileSync(facts, 'utf8')) as Conversation;
  fs.mkdirSync(dir, { recursive: true });
  const work = fs.mkdtempSync(path.join(dir, 'work-'));
  const rnd = random(seed);
  const parts: Buffer[] = [];
  const out: Turn[] = [];
  let samples = 0;
  let previous = -1;
  for (let i = 0; i < turns; i++) {
    const others = [...Array(speakers).keys()].filter((s) => s !== previous);
    const speaker = i < speakers ? i : others[Math.floor(rnd() * others.length)]!;
    previous = speaker;
    const a = Math.floor(rnd() * SENTENCES.length);
    const b = (a + 1 + Math.floor(rnd() * (SENTENCES.length - 1))) % SENTENCES.length;
    const text = `${SENTENCES[a]} ${SENTENCES[b]}`;
    const gap = Math.round(RATE * (0.3 + 0.5 * rnd()));
    parts.push(Buffer.alloc(gap * 2));
    samples += gap;
    const pcm = await speak(text, speaker, work, i);
    out.push({ start: samples / RATE, end: (samples + pcm.length / 2) / RATE, speaker, text });
    parts.push(pcm);
    samples += pcm.length / 2;
  }
  parts.push(Buffer.alloc(RATE));
  samples += RATE / 2;
  const data = Buffer.concat(parts);
  fs.writeFileSync(`${file}.${process.pid}.part`, Buffer.concat([wavHeader(data.length), data]));
  fs.renameSync(`${file}.${process.pid}.part`, file);
  fs.rmSync(work, { recursive: true, force: true });
  const conv: Conversation = { file, speakers, turns: out, duration: data.length / 2 / RATE };
  fs.writeFileSync(facts, JSON.stringify(conv));
  return conv;
}

/** The true speaker at time t (the turn holding it, else the nearest). */
export function trueSpeakerAt(conv: Conversation, t: number): number {
  let best = conv.turns[0]!;
  let distance = Infinity;
  for (const turn of conv.turns) {
    const d = t < turn.start ? turn.start - t : t > turn.end ? t - turn.end : 0;
    if (d < distance) {
      distance = d;
      best = turn;
    }
  }
  return best.speaker;
}

/** Share of words on the right speaker under the best one-to-one mapping of labels to true speakers. */
export function wordAccuracy(conv: Conversation, words: { start: number; end: number; speaker: string }[]): number {
  if (words.length === 0) return 0;
  const labels = [...new Set(words.map((w) => w.speaker))];
  const truth = words.map((w) => trueSpeakerAt(conv, (w.start + w.end) / 2));
  const speakers = [...Array(Math.max(conv.speakers, labels.length)).keys()];
  let best = 0;
  // every assignment of labels to distinct speakers (at most 10 labels, 4 speakers here: small)
  const assign = (i: number, used: Set<number>, map: Map<string, number>): void => {
    if (i === labels.length) {
      const right = words.filter((w, k) => map.get(w.speaker) === truth[k]).length;
      best = Math.max(best, right / words.length);
      return;
    }
    for (const s of speakers) {
      if (used.has(s)) continue;
      used.add(s);
      map.set(labels[i]!, s);
      assign(i + 1, used, map);
      used.delete(s);
    }
    map.delete(labels[i]!);
  };
  assign(0, new Set(), new Map());
  return best;
}

/** A two-voice conversation as a call recording: each voice's turns on a channel of its own (voice 0 left, voice 1 right), silence on the other. */
export function stereoConversation(conv: Conversation): string {
  if (conv.speakers !== 2) throw new Error('a stereo conversation needs two voices');
  const file = conv.file.replace(/\.wav$/, '.stereo.wav');
  if (fs.existsSync(file)) return file;
  const mono = fs.readFileSync(conv.file).subarray(44);
  const samples = mono.length / 2;
  const stereo = Buffer.alloc(samples * 4);
  for (const turn of conv.turns) {
    const from = Math.floor(turn.start * RATE);
    const to = Math.min(samples, Math.ceil(turn.end * RATE));
    for (let i = from; i < to; i++) stereo.writeInt16LE(mono.readInt16LE(i * 2), i * 4 + turn.speaker * 2);
  }
  fs.writeFileSync(`${file}.${process.pid}.part`, Buffer.concat([wavHeader(stereo.length, { channels: 2 }), stereo]));
  fs.renameSync(`${file}.${process.pid}.part`, file);
  return file;
}

/** A reference clip of one voice (for known speakers): sentences none of the conversations' turns use, as 16 kHz mono WAV. */
export async function referenceClip(speaker: number, text = 'Good morning everyone, thank you for joining the call today. I will start with a short update.'): Promise<string> {
  const dir = path.join(os.tmpdir(), 'mediasvc-conversations-v1');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `reference-${speaker}-${Buffer.from(text).toString('hex').slice(0, 16)}.wav`);
  if (fs.existsSync(file)) return file;
  const work = fs.mkdtempSync(path.join(dir, 'work-'));
  const pcm = await speak(text, speaker, work, 0);
  fs.writeFileSync(`${file}.${process.pid}.part`, Buffer.concat([wavHeader(pcm.length), pcm]));
  fs.renameSync(`${file}.${process.pid}.part`, file);
  fs.rmSync(work, { recursive: true, force: true });
  return file;
}

/** Silence (or any samples) of `seconds` as a 16 kHz mono WAV: a reference clip with no speech. */
export function silentClip(seconds: number): string {
  const file = path.join(os.tmpdir(), 'mediasvc-conversations-v1', `silence-${seconds}.wav`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file)) {
    const data = Buffer.alloc(Math.round(seconds * RATE) * 2);
    fs.writeFileSync(file, Buffer.concat([wavHeader(data.length), data]));
  }
  return file;
}
