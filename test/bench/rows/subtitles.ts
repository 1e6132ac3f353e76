// Subtitles in a download: a 60 s 720p video whose sound is speech (jfk.wav looped), downloaded as
// mp4 with English subtitles from speech, end to end through serve (created_at → completed_at),
// against what a user would do by hand with the service: a transcription job (SRT out) of the same
// URL, then a bare ffmpeg mux of that SRT into the video.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { SPEECH_DIR } from '../../helpers/speech-fixtures';
import { waitFor } from '../../helpers/processes';
import { fmt, type BenchContext, type BenchRow } from '../harness';

const run = promisify(execFile);
let url = '';
let video = '';

async function job(ctx: BenchContext, p: string, body: unknown): Promise<{ seconds: number; job: Record<string, any> }> {
  const key = await ctx.newKey();
  const api = async (method: string, route: string, b?: unknown) => (await (await fetch(ctx.stack.base + route, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: b ? JSON.stringify(b) : undefined })).json()) as Record<string, any>;
  const created = await api('POST', p, body);
  if (!created.job_id) throw new Error(`create failed: ${JSON.stringify(created)}`);
  const done = await waitFor(p, async () => {
    const j = await api('GET', `/v1/jobs/${created.job_id}`);
    return j.status === 'completed' || j.status === 'failed' ? j : undefined;
  }, 1_800_000, 200);
  if (done.status !== 'completed') throw new Error(`${p} failed: ${done.error_message}`);
  return { seconds: (Date.parse(done.completed_at) - Date.parse(done.created_at)) / 1000, job: done };
}

const row: BenchRow = {
  name: 'subtitles in a download',
  order: 85,
  async setup(ctx) {
    video = path.join(ctx.work, 'files', 'speech60.mp4');
    if (!fs.existsSync(video)) {
      await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=1280x720:r=25:d=60', '-stream_loop', '-1', '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-map', '0:v', '-map', '1:a', '-t', '60', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-movflags', '+faststart', '-y', video]);
    }
    url = ctx.files.url('speech60.mp4');
    // the runner's first job loads the model (the multilingual base, as both measured jobs detect the language): not measured
    await job(ctx, '/v1/transcribe', { url, model_size: 'base' });
  },
  async measure(ctx) {
    const product = (await job(ctx, '/v1/download', { url, format: 'mp4', subtitles: { languages: ['en'], source: 'speech' } })).seconds;
    const transcribed = await job(ctx, '/v1/transcribe', { url, model_size: 'base', output_format: 'srt' });
    const srt = path.join(ctx.work, 'bench-subtitles.srt');
    fs.writeFileSync(srt, Buffer.from(await (await fetch(transcribed.job.download_url)).arrayBuffer()));
    const t0 = performance.now();
    await run('ffmpeg', ['-v', 'error', '-i', video, '-i', srt, '-map', '0', '-map', '1:0', '-c', 'copy', '-c:s', 'mov_text', '-metadata:s:s:0', 'language=eng', '-movflags', '+faststart', '-y', path.join(ctx.work, 'bench-subtitled.mp4')]);
    const mux = (performance.now() - t0) / 1000;
    return { product, transcribe: transcribed.seconds, mux };
  },
  report: (m) => [
    {
      what: 'Download of 60 s 720p with English subtitles from speech (mp4, mov_text) against a transcription job (SRT) plus a bare ffmpeg mux (goal ≤ 1.1×)',
      product: fmt.s(m.product!),
      peer: `${fmt.s(m.transcribe! + m.mux!)} (${fmt.s(m.transcribe!)} + ${fmt.s(m.mux!)})`,
      ratio: fmt.ratio(m.product!, m.transcribe! + m.mux!),
    },
  ],
};

export const rows: BenchRow[] = [row];
