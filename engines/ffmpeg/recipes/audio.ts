// ffmpeg recipes that turn a source's first audio track into raw samples: for the waveform's peaks
// and for speech recognition. Pure: how to open the source, the sample format, and the output in,
// the argument list out.
import type { InputOf } from './preview';

/** The first audio track, no picture, mixed down to one channel of signed 16-bit samples. */
const MONO_S16 = (sampleRate: number) => ['-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(sampleRate), '-c:a', 'pcm_s16le'];

/**
 * Headerless samples at the source's own rate, the input audiowaveform's peaks take (it mixes
 * channels down too), on standard output for the waveform step to read as they come. In full 32 KB
 * blocks: by default ffmpeg writes each decoded frame to a pipe on its own, 140,000 writes of 2 KB for
 * an hour of AAC, each a turn of the reader's event loop (3.6 s against 4.4 s for that hour, peaks taken).
 */
export function rawSamplesRecipe(input: InputOf, p: { sampleRate: number; stretch?: SampleStretch }): string[] {
  const stretch = p.stretch ? ['-ss', String(p.stretch.from), ...(p.stretch.seconds === null ? [] : ['-t', String(p.stretch.seconds)])] : [];
  return [...input(stretch), ...MONO_S16(p.sampleRate), '-flush_packets', '0', '-f', 's16le', '-y', 'pipe:1'];
}

/**
 * A stretch of the source's audio, `seconds` long from `from` (null: to the end). As input options
 * on an indexed file, ffmpeg seeks and trims to the sample: stretches that meet decode to as many
 * samples as the whole.
 */
export interface SampleStretch {
  from: number;
  seconds: number | null;
}

/** Sample rate faster-whisper works at: it resamples anything else itself, slower. */
export const SPEECH_SAMPLE_RATE = 16_000;

/** A 16 kHz mono WAV of a local file, what the speech runner reads when the source's length is unknown. */
export function speechAudioRecipe(file: string, out: string): string[] {
  return ['-i', file, ...MONO_S16(SPEECH_SAMPLE_RATE), '-f', 'wav', '-y', out];
}

/** One channel (0-based) of the first audio track as a 16 kHz mono WAV: a speaker per channel, each recognised on its own. */
export function speechChannelRecipe(file: string, channel: number, out: string): string[] {
  return ['-i', file, '-map', '0:a:0', '-vn', '-af', `pan=mono|c0=c${channel}`, '-ar', String(SPEECH_SAMPLE_RATE), '-c:a', 'pcm_s16le', '-f', 'wav', '-y', out];
}

/**
 * A source's first audio track copied as it is (no decoding) into Matroska, which holds any audio
 * codec: what a speech job keeps of a video file at a URL.
 */
export function audioTrackCopyRecipe(input: string, out: string): string[] {
  return ['-i', input, '-map', '0:a:0', '-vn', '-sn', '-dn', '-c', 'copy', '-f', 'matroska', '-y', out];
}
