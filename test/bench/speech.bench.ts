// `make bench-speech`: realtime factors of the transcribe job, end to end through the API, for every
// installed model, next to bare faster-whisper on the same audio in the same run: the long clip and
// a 10 s clip (where a per-job model load would show most). One unmeasured job per model first: the
// speech worker keeps its model loaded, as it does in service.
//
// The clip (≥ 60 s of real speech) is the shared recordings plus Debian's pocketsphinx-testdata
// LibriVox clips, each resampled to 16 kHz mono and concatenated. Nothing is downloaded.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createSpeechServices } from '../../engines/speech/services';
import { loadConfig, projectRoot } from '../../lib/config';
import { waitFor } from '../helpers/processes';
import { startServeStack } from '../helpers/serve-stack';

const SHARED = path.join(projectRoot, '../shared/media/speech');
const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';

const BARE = `
import json, sys, time
t0 = time.monotonic()
from faster_whisper import WhisperModel
m = WhisperModel(sys.argv[1], device="cpu", compute_type="int8", cpu_threads=0, local_files_only=True)
t1 = time.monotonic()
segs, info = m.transcribe(sys.argv[2], language=sys.argv[3] or None, beam_size=5, vad_filter=True, word_timestamps=True)
n = len(list(segs))
t2 = time.monotonic()
print(json.dumps({"duration": info.duration, "import_load_s": t1 - t0, "transcribe_s": t2 - t1, "segments": n}))
`;

function buildClip(dir: string): string {
  const librivox = fs.existsSync(LIBRIVOX) ? fs.readdirSync(LIBRIVOX).filter((f) => f.endsWith('.wav')).sort().map((f) => path.join(LIBRIVOX, f)) : [];
  const shared = ['jfk.wav', 'english.wav', 'french.aiff', 'jfk.flac'].map((f) => path.join(SHARED, f));
  const sources = [...librivox, ...shared, ...librivox];
  const parts = sources.map((src, i) => {
    const out = path.join(dir, `part${i}.wav`);
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', src, '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', out]);
    return out;
  });
  fs.writeFileSync(path.join(dir, 'list.txt'), parts.map((p) => `file '${p}'`).join('\n'));
  const clip = path.join(dir, 'clip.wav');
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', path.join(dir, 'list.txt'), '-c', 'copy', clip]);
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', clip, '-t', '10', '-c', 'copy', path.join(dir, 'clip10.wav')]);
  return clip;
}

function duration(file: string): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]).toString().trim());
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-speech-'));
  const clip = buildClip(work);
  const seconds = duration(clip);
  if (seconds < 60) throw new Error(`the bench clip is only ${seconds} s; install pocketsphinx-testdata (scripts/install-tools.sh)`);
  const config = loadConfig();
  const models = createSpeechServices(config).registry.list().filter((m) => m.size !== 'large');
  console.log(`bench-speech: ${seconds.toFixed(1)} s clip, ${os.cpus().length} CPUs, int8, beam 5, VAD, word timestamps; models: ${models.map((m) => m.name).join(', ')}`);

  const server = http.createServer((req, res) => {
    const file = path.join(work, req.url?.includes('clip10') ? 'clip10.wav' : 'clip.wav');
    res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': fs.statSync(file).size });
    if (req.method === 'HEAD') res.end();
    else fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const clips = [
    { label: `${seconds.toFixed(1)} s`, file: clip, url: `http://127.0.0.1:${port}/clip.wav`, seconds },
    { label: '10 s', file: path.join(work, 'clip10.wav'), url: `http://127.0.0.1:${port}/clip10.wav`, seconds: duration(path.join(work, 'clip10.wav')) },
  ];

  const stack = await startServeStack({ name: 'bench', plan: 'business', env: { WHISPER_AUTO_DOWNLOAD: '' } });
  const { base, key } = stack;
  const rows: string[][] = [];
  try {
    // A kept-alive socket may be closed by the server while bare faster-whisper runs: retry once
    // (POSTs carry an Idempotency-Key, so a retry never makes a second job).
    const api = async (method: string, p: string, body?: unknown) => {
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      if (method === 'POST') headers['idempotency-key'] = `bench-${Date.now()}-${Math.random()}`;
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await fetch(base + p, { method, headers, body: body ? JSON.stringify(body) : undefined });
          return (await res.json()) as any;
        } catch (err) {
          if (attempt >= 3) throw err;
        }
      }
    };
    const transcribe = async (url: string, m: (typeof models)[number], language: string) => {
      const created = await api('POST', '/v1/transcribe', { url, model_size: m.size, language: language || null });
      if (!created.job_id) throw new Error(`create failed: ${JSON.stringify(created)}`);
      const job = await waitFor('job', async () => {
        const j = await api('GET', `/v1/jobs/${created.job_id}`);
        return j.status === 'completed' || j.status === 'failed' ? j : undefined;
      }, 1_800_000, 100);
      if (job.status !== 'completed') throw new Error(`job failed: ${job.error_message}`);
      return job;
    };
    for (const m of models) {
      const language = m.englishOnly ? 'en' : '';
      // the speech worker's first job with a model loads it; later jobs find it warm
      await transcribe(clips[1]!.url, m, language);
      for (const c of clips) {
        // bare faster-whisper: a fresh process, as a user would run it (import + load + transcribe)
        const t0 = performance.now();
        const bare = JSON.parse(execFileSync(config.whisperPython, ['-c', BARE, m.dir, c.file, language], { env: { ...process.env, HF_HUB_OFFLINE: '1' } }).toString()) as { import_load_s: number; transcribe_s: number };
        const bareWall = (performance.now() - t0) / 1000;
        // the job, end to end: created → completed (fetch, ffmpeg, faster-whisper, output file)
        const job = await transcribe(c.url, m, language);
        const jobWall = (Date.parse(job.completed_at) - Date.parse(job.created_at)) / 1000;
        const speechRtf = job.result_data.realtime_factor as number;
        const bareRtf = c.seconds / bareWall;
        const bareModelRtf = c.seconds / (bare.import_load_s + bare.transcribe_s);
        const jobRtf = c.seconds / jobWall;
        rows.push([
          m.name,
          c.label,
          `${bareRtf.toFixed(1)}x (${bareWall.toFixed(1)} s)`,
          `${bareModelRtf.toFixed(1)}x`,
          `${speechRtf.toFixed(1)}x (${(job.result_data.processing_seconds as number).toFixed(1)} s)`,
          `${jobRtf.toFixed(1)}x (${jobWall.toFixed(1)} s)`,
          (speechRtf / bareRtf).toFixed(2),
          (jobRtf / bareRtf).toFixed(2),
        ]);
      }
    }
  } finally {
    await stack.stop();
    server.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
  const head = ['model', 'clip', 'bare faster-whisper (process)', 'bare (in-process)', 'speech activity', 'whole job (API)', 'activity/bare', 'job/bare'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
