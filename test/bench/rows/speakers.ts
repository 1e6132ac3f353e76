// Speaker labels' cost: a transcription job of about 2 minutes of conversation (3 synthetic voices,
// test/helpers/conversations.ts) with `base`, with and without diarize, end to end through serve
// (created_at → completed_at), and the peak memory of the speech runner (its VmHWM: read after the
// plain job, then after the labelled one; the runner is warm and long-lived, so the rise is what
// the speaker encoder adds at its peak).
import fs from 'node:fs';
import path from 'node:path';
import { conversation } from '../../helpers/conversations';
import { waitFor } from '../../helpers/processes';
import { fmt, groupProcesses, type BenchContext, type BenchRow } from '../harness';

let url = '';
let audioSeconds = 0;
/** The runner's peak before and after its first labelled job: later rounds' peaks already hold one. */
let peaks: { plain: number; labelled: number } | null = null;

/** The highest peak resident memory among the serve tree's speech runners. */
function runnerPeak(pgid: number): number {
  let peak = 0;
  for (const { pid } of groupProcesses(pgid)) {
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // ended between the listing and the read
    }
    if (!cmd.includes('whisper_runner.py')) continue;
    const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (hwm) peak = Math.max(peak, Number(hwm[1]) * 1024);
  }
  return peak;
}

async function transcribe(ctx: BenchContext, diarize: boolean): Promise<number> {
  const key = await ctx.newKey();
  const api = async (method: string, p: string, body?: unknown) => (await (await fetch(ctx.stack.base + p, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })).json()) as Record<string, any>;
  const created = await api('POST', '/v1/transcribe', { url, model_size: 'base', language: 'en', diarize });
  if (!created.job_id) throw new Error(`create failed: ${JSON.stringify(created)}`);
  const job = await waitFor('transcription', async () => {
    const j = await api('GET', `/v1/jobs/${created.job_id}`);
    return j.status === 'completed' || j.status === 'failed' ? j : undefined;
  }, 1_800_000, 200);
  if (job.status !== 'completed') throw new Error(`job failed: ${job.error_message}`);
  return (Date.parse(job.completed_at) - Date.parse(job.created_at)) / 1000;
}

const row: BenchRow = {
  name: 'speaker labels',
  order: 80,
  async setup(ctx) {
    const conv = await conversation(3, 20, 11);
    audioSeconds = conv.duration;
    fs.copyFileSync(conv.file, path.join(ctx.work, 'files', 'conversation.wav'));
    url = ctx.files.url('conversation.wav');
    // the runner's first job loads the model: not measured
    await transcribe(ctx, false);
  },
  async measure(ctx) {
    const pgid = ctx.stack.svc.child.pid!;
    const plain = await transcribe(ctx, false);
    const plainPeak = runnerPeak(pgid);
    const labelled = await transcribe(ctx, true);
    peaks ??= { plain: plainPeak, labelled: runnerPeak(pgid) };
    return { plain, labelled };
  },
  report: (m) => [
    { what: `Transcription job, ${Math.round(audioSeconds)} s of 3 voices, base: with speaker labels (diarize) against without`, product: fmt.s(m.labelled!), peer: fmt.s(m.plain!), ratio: fmt.ratio(m.labelled!, m.plain!) },
    ...(peaks ? [{ what: 'Peak memory of the speech runner: after its first labelled job against before it (after plain jobs)', product: fmt.mb(peaks.labelled), peer: fmt.mb(peaks.plain), ratio: `+${fmt.mb(peaks.labelled - peaks.plain)}` }] : []),
  ],
};

export const rows: BenchRow[] = [row];
