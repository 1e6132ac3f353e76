// "speech long": 10 minutes of speech (BENCH_SPEECH_LONG_SECONDS) transcribed with `base` by the
// transcribe job, which decodes it in batches, against bare faster-whisper decoding it sequentially
// (as the service did before), with the WER of each against the reference. The speech is the shared
// recordings with English reference texts and Debian's pocketsphinx-testdata LibriVox clips (with
// theirs), looped; the reference is their texts looped the same way.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createSpeechServices } from '../../../engines/speech/services';
import { loadConfig, projectRoot } from '../../../lib/config';
import { wordErrorRate } from '../../helpers/subtitles';
import { fmt, serveFiles, type BenchContext, type BenchRow } from '../harness';

const run = promisify(execFile);
const SHARED = path.join(projectRoot, '../shared/media/speech');
const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';
const SECONDS = Number(process.env.BENCH_SPEECH_LONG_SECONDS ?? 600);

const BARE_SEQUENTIAL = `
import json, sys, time
from faster_whisper import WhisperModel
model = WhisperModel(sys.argv[1], device="cpu", compute_type="int8", local_files_only=True)
t0 = time.monotonic()
segments, _ = model.transcribe(sys.argv[2], beam_size=5, vad_filter=True, word_timestamps=True)
text = " ".join(s.text for s in segments)
print(json.dumps({"s": time.monotonic() - t0, "text": text}))
`;

let dir = '';
let files: Awaited<ReturnType<typeof serveFiles>> | null = null;
let reference = '';

/** The recordings with a reference text, and the text: each once, in order. */
function recordings(): { file: string; text: string }[] {
  const expected = JSON.parse(fs.readFileSync(path.join(SHARED, 'expected.json'), 'utf8')) as Record<string, { language?: string; text?: string }>;
  const shared = ['jfk.wav', 'english.wav'].map((f) => ({ file: path.join(SHARED, f), text: expected[f]!.text! }));
  if (!fs.existsSync(LIBRIVOX)) return shared;
  const lines = fs.readFileSync(path.join(LIBRIVOX, 'transcription'), 'utf8').split('\n');
  const librivox = fs.readdirSync(LIBRIVOX).filter((f) => f.endsWith('.wav')).sort().map((f) => {
    const line = lines.find((l) => l.includes(`(${path.basename(f, '.wav')})`)) ?? '';
    return { file: path.join(LIBRIVOX, f), text: line.replace(/<\/?s>/g, '').replace(/\(.*\)/, '').trim() };
  });
  return [...librivox, ...shared];
}

const row: BenchRow = {
  name: 'speech long',
  order: 85,
  async setup() {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-speech-long-'));
    const parts = recordings();
    const unitSeconds: number[] = [];
    for (const [i, p] of parts.entries()) {
      const out = path.join(dir, `p${i}.wav`);
      await run('ffmpeg', ['-v', 'error', '-y', '-i', p.file, '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', out]);
      unitSeconds.push(Number((await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', out])).stdout));
    }
    const loops = Math.ceil(SECONDS / unitSeconds.reduce((a, b) => a + b, 0));
    const list = Array.from({ length: loops }, () => parts.map((_, i) => `file '${path.join(dir, `p${i}.wav`)}'`)).flat();
    fs.writeFileSync(path.join(dir, 'list.txt'), list.join('\n'));
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', path.join(dir, 'list.txt'), '-c', 'copy', path.join(dir, 'speech.wav')]);
    reference = Array.from({ length: loops }, () => parts.map((p) => p.text).join(' ')).join(' ');
    files = await serveFiles(dir);
  },
  async measure(ctx: BenchContext) {
    await ctx.quiesce();
    const created = await ctx.stack.api('POST', '/v1/transcribe', { url: files!.url('speech.wav'), model_size: 'base', language: 'en' });
    if (created.status !== 202) throw new Error(`transcribe: ${created.status} ${JSON.stringify(created.body)}`);
    const job = (await ctx.stack.waitJob(created.body.job_id as string, 3_600_000)) as unknown as { status: string; error_message?: string; created_at: string; completed_at: string; download_url: string; result_data: { duration: number } };
    if (job.status !== 'completed') throw new Error(`transcribe failed: ${job.error_message}`);
    const text = ((await (await fetch(job.download_url)).json()) as { text: string }).text;
    const config = loadConfig();
    const model = createSpeechServices(config).registry.list().find((m) => m.size === 'base')!.dir;
    const bare = JSON.parse((await run(config.whisperPython, ['-c', BARE_SEQUENTIAL, model, path.join(dir, 'speech.wav')], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, maxBuffer: 64 * 1024 * 1024 })).stdout) as { s: number; text: string };
    return {
      seconds: job.result_data.duration,
      job: (Date.parse(job.completed_at) - Date.parse(job.created_at)) / 1000,
      jobWer: wordErrorRate(reference, text),
      bare: bare.s,
      bareWer: wordErrorRate(reference, bare.text),
    };
  },
  report: (m) => [
    {
      what: `speech long: ${fmt.s(m.seconds!)} of speech, \`base\`: the transcribe job (batched) against bare sequential faster-whisper`,
      product: `${fmt.s(m.job!)} (the whole job), WER ${(m.jobWer! * 100).toFixed(1)} %`,
      peer: `${fmt.s(m.bare!)} (decoding alone), WER ${(m.bareWer! * 100).toFixed(1)} %`,
      ratio: `${(m.bare! / m.job!).toFixed(2)}× faster`,
    },
  ],
  async teardown() {
    await files?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  },
};

export const rows = [row];
