// `make soak`: the embedded default (`bin/mediasvc serve`) under a bounded, mixed load for SOAK_MINUTES
// (default 60): every operation, uploads, webhooks, result downloads and steady reads, two accounts,
// one injected fault (the Temporal dev server paused). It samples memory, file descriptors and DATA_DIR,
// then prints the figures and checks, and exits non-zero when a check fails. Not a mocha spec on purpose.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { groupProcesses, processRss } from '../bench/harness';
import { fixtureCacheDir, serveThrottled, startFixturePlatform, type FixturePlatform } from '../helpers/fixture-platform';
import { querySqlite } from '../helpers/ledger';
import { PT_VIDEOS, startPeerTubeFixture, type PeerTubeFixture } from '../helpers/peertube-fixture';
import { cli, stopService } from '../helpers/processes';
import { startServeStack, type ServeStack } from '../helpers/serve-stack';
import { serveSpeechFiles, SPEECH_DIR, type SpeechFiles } from '../helpers/speech-fixtures';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';

const num = (name: string, dflt: number): number => (process.env[name] !== undefined && process.env[name] !== '' ? Number(process.env[name]) : dflt);
const MINUTES = num('SOAK_MINUTES', 60);
const LONG = MINUTES >= 30;
const WINDOW_MIN = num('SOAK_WINDOW_MINUTES', LONG ? 10 : 1);
const WARMUP_MIN = num('SOAK_WARMUP_MINUTES', LONG ? 10 : MINUTES / 3);
const SAMPLE_S = num('SOAK_SAMPLE_SECONDS', LONG ? 30 : 10);
const FAULT_S = num('SOAK_FAULT_SECONDS', 30);
const TTL_MIN = num('SOAK_TTL_MINUTES', 5);
const MAX_IN_FLIGHT = num('SOAK_MAX_IN_FLIGHT', 12);
/** The storage sweep runs every 5 minutes (workers/schedules.ts): an expired output may stay that long, plus a minute's slack. */
const SWEEP_GRACE_MS = 6 * 60_000;
/** 503s this long after the fault ends still count as the fault's (work queued behind it drains). */
const FAULT_TAIL_MS = 90_000;
/** The edges compared for "flat": the first and the last minutes after warm-up. */
/** Open fds that may differ between two settled readings: the pipes of a speech runner started or stopped in between (3 each). */
const FD_SLACK = 5;
const EDGE_MIN = Math.max(SAMPLE_S / 60, Math.min(5, (MINUTES - WARMUP_MIN) / 4));

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const MB = (b: number) => b / 1024 / 1024;
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
const median = (xs: number[]) => percentile(xs, 50);

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  const num_ = points.reduce((a, p) => a + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((a, p) => a + (p[0] - mx) ** 2, 0);
  return den === 0 ? NaN : num_ / den;
}

interface Account {
  name: string;
  id: string;
  /** The key that creates jobs, and a second one for the steady reads (each key has its own minute limit). */
  key: string;
  readKey: string;
  startCredits: number;
  infoCharged: number;
  endpointId: number | null;
  endpointSecret: string | null;
}

interface Tracked {
  id: string;
  account: Account;
  label: string;
  createdAt: number;
  webhookUrl: string | null;
  status: string;
  done: boolean;
}

interface ProcSample {
  pid: string;
  label: string;
  rss: number;
  fds: number;
}

interface Sample {
  t: number;
  procs: ProcSample[];
  tools: number;
  dataDir: Record<string, number>;
  outputs: { live: number; awaitingSweep: number; overdue: number; orphan: number; liveBytes: number; awaitingBytes: number; overdueBytes: number; orphanBytes: number };
  uploads: { files: number; live: number; overdue: number };
  inFlight: number;
}

const t0 = Date.now();
const elapsedMin = (t = Date.now()) => (t - t0) / 60_000;
const windowOf = (t: number) => Math.floor((t - t0) / (WINDOW_MIN * 60_000));

/** Latencies (ms) by kind and window. */
const latencies = new Map<string, Map<number, number[]>>();
function record(kind: string, startedAt: number, ms: number): void {
  const byWindow = latencies.get(kind) ?? new Map<number, number[]>();
  latencies.set(kind, byWindow);
  const w = windowOf(startedAt);
  byWindow.set(w, [...(byWindow.get(w) ?? []), ms]);
}

const statusCounts = new Map<number, number>();
const serverErrors: { at: number; status: number; what: string; detail: string }[] = [];
const networkErrors: { at: number; what: string; detail: string }[] = [];
const unexpected: string[] = [];
let fault: { start: number; end: number } | null = null;
const inFault = (t: number) => fault !== null && t >= fault.start && t <= fault.end + FAULT_TAIL_MS;

interface Answer {
  status: number;
  headers: Headers;
  body: any;
  bytes: number;
}

let base = '';
/** One request: its status and latency are recorded under `kind`; a body is JSON unless `raw`. */
async function call(key: string | null, method: string, url: string, opts: { kind?: string; json?: unknown; body?: Buffer | FormData; headers?: Record<string, string>; raw?: boolean; timeoutMs?: number } = {}): Promise<Answer | null> {
  const started = Date.now();
  const what = `${method} ${url.replace(base, '').split('?')[0]}`;
  try {
    const res = await fetch(url.startsWith('http') ? url : base + url, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(opts.json !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      body: opts.json !== undefined ? JSON.stringify(opts.json) : opts.body,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 120_000),
    });
    const buf = Buffer.from(await res.arrayBuffer());
    const ms = Date.now() - started;
    statusCounts.set(res.status, (statusCounts.get(res.status) ?? 0) + 1);
    if (res.status >= 500) serverErrors.push({ at: started, status: res.status, what, detail: buf.toString('utf8').slice(0, 200) });
    if (opts.kind && res.status < 500) record(opts.kind, started, ms);
    let body: any = null;
    if (!opts.raw && buf.length && (res.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(buf.toString('utf8'));
    else if (!opts.raw) body = buf.toString('utf8');
    return { status: res.status, headers: res.headers, body, bytes: buf.length };
  } catch (err) {
    networkErrors.push({ at: started, what, detail: String(err).slice(0, 200) });
    return null;
  }
}

/** One operation of the mix: what it sends and how often (relative weight). */
interface Op {
  label: string;
  weight: number;
  run(a: Account): Promise<void>;
}

interface World {
  stack: ServeStack;
  fx: FixturePlatform;
  speech: SpeechFiles;
  pt: PeerTubeFixture;
  hooks: Receiver;
  accounts: [Account, Account];
}

const tracked = new Map<string, Tracked>();
let inFlight = 0;
let skipped = 0;
const fileChecks = { downloads: 0, bytes: 0, ranges: 0, expiredGone: 0, expiredServed: 0 };
const expiredLinks: { url: string; expiresAt: number }[] = [];
let webhookTests = 0;

/** Polls a job to its end, records its time to complete, and downloads its result. */
async function follow(w: World, job: Tracked): Promise<void> {
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    await sleep(2000);
    const res = await call(job.account.readKey, 'GET', `/v1/jobs/${job.id}`, { kind: 'reads' });
    if (!res || res.status !== 200) continue;
    job.status = res.body.status;
    if (job.status === 'completed' || job.status === 'failed') break;
    if (Date.now() > deadline) {
      unexpected.push(`job ${job.id} (${job.label}) still ${job.status} after 20 minutes`);
      return;
    }
  }
  job.done = true;
  const body = (await call(job.account.readKey, 'GET', `/v1/jobs/${job.id}`))?.body;
  if (!body) return;
  if (job.status === 'completed') {
    record(`job:${body.job_type}`, job.createdAt, Date.parse(body.completed_at) - Date.parse(body.created_at));
    if (body.download_url) {
      const ranged = fileChecks.downloads % 5 === 4;
      const got = await call(null, 'GET', body.download_url, { kind: 'result download', raw: true, headers: ranged ? { range: 'bytes=0-99' } : {} });
      if (got && (got.status === 200 || got.status === 206)) {
        fileChecks.downloads++;
        fileChecks.bytes += got.bytes;
        if (ranged) {
          fileChecks.ranges++;
          if (got.status !== 206 || got.bytes !== Math.min(100, Number(got.headers.get('content-range')?.split('/')[1] ?? 100))) unexpected.push(`ranged download of ${job.id}: ${got.status}, ${got.bytes} bytes`);
        } else if (Number(got.headers.get('content-length')) !== got.bytes || got.bytes === 0) unexpected.push(`download of ${job.id}: ${got.bytes} bytes, content-length ${got.headers.get('content-length')}`);
      } else if (got) unexpected.push(`download of ${job.id} (${job.label}): ${got.status}`);
      if (expiredLinks.length < 200 && Math.random() < 0.2) expiredLinks.push({ url: body.download_url, expiresAt: Date.parse(body.expires_at) });
    }
  } else if (!/cancel|nomedia/.test(job.label)) {
    unexpected.push(`job ${job.id} (${job.label}) failed: ${body.error_message}`);
  }
}

/** Creates a job, then follows it; `cancelAfterMs` cancels it while it runs. */
async function createJob(w: World, a: Account, label: string, p: string, body: Record<string, unknown>, cancelAfterMs?: number): Promise<void> {
  const webhookUrl = a === w.accounts[1] || Math.random() < 0.3 ? w.hooks.url('/job') : null;
  const started = Date.now();
  const res = await call(a.key, 'POST', p, { kind: 'create', json: webhookUrl ? { ...body, webhook_url: webhookUrl } : body });
  if (!res) return;
  if (res.status !== 202) {
    unexpected.push(`${label}: POST ${p} answered ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    return;
  }
  const job: Tracked = { id: res.body.job_id, account: a, label, createdAt: started, webhookUrl, status: 'pending', done: false };
  tracked.set(job.id, job);
  if (cancelAfterMs !== undefined) {
    setTimeout(() => {
      void call(a.key, 'POST', `/v1/jobs/${job.id}/cancel`).then((r) => {
        // a 5xx is counted (and judged against the fault) with the others
        if (r && r.status < 500 && ![200, 202, 409].includes(r.status)) unexpected.push(`cancel ${job.id}: ${r.status}`);
      });
    }, cancelAfterMs);
  }
  await follow(w, job);
}

function operations(w: World): Op[] {
  const { fx, speech, pt } = w;
  const video = fx.url('/media/v480.mp4');
  const job = (label: string, weight: number, p: string, body: () => Record<string, unknown>, cancelAfterMs?: number): Op => ({ label, weight, run: (a) => createJob(w, a, label, p, body(), cancelAfterMs) });
  return [
    job('download mp4', 3, '/v1/download', () => ({ url: fx.url('/watch/trailer'), quality: '480p', format: 'mp4' })),
    job('download hls', 1, '/v1/download', () => ({ url: fx.url('/hls/master.m3u8'), quality: '720p', format: 'mp4' })),
    job('download clip', 2, '/v1/download', () => ({ url: video, clip_start: '1', clip_end: '3', format: 'mp4' })),
    job('download mp3 + normalize', 1, '/v1/download', () => ({ url: fx.url('/media/quiet.m4a'), quality: 'audio', format: 'mp3', processing: ['normalize'] })),
    job('download wav + trim_silence, denoise', 0.5, '/v1/download', () => ({ url: fx.url('/media/noisy.m4a'), quality: 'audio', format: 'wav', processing: ['trim_silence', 'denoise'] })),
    job('preview gif', 2, '/v1/preview', () => ({ url: video, preview_type: 'gif', duration: 2, fps: 8, width: 240 })),
    job('preview thumbnail', 3, '/v1/preview', () => ({ url: video, preview_type: 'thumbnail', timestamp: '1' })),
    job('preview mosaic', 1.5, '/v1/preview', () => ({ url: video, preview_type: 'mosaic', columns: 3, rows: 2, width: 320 })),
    job('preview clip', 1.5, '/v1/preview', () => ({ url: video, preview_type: 'clip', start: '1', duration: 2 })),
    job('fingerprint', 3, '/v1/fingerprint', () => ({ url: video, hash_size: [8, 16, 32][Math.floor(Math.random() * 3)] })),
    job('waveform json', 2, '/v1/waveform', () => ({ url: fx.url('/media/gaps.m4a'), points: 500 })),
    job('waveform png', 1, '/v1/waveform', () => ({ url: video, format: 'png', width: 400, height: 64 })),
    job('comments', 2, '/v1/comments', () => ({ url: pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), max_comments: 50, sort: Math.random() < 0.5 ? 'top' : 'newest' })),
    job('transcribe', 0.7, '/v1/transcribe', () => ({ url: speech.url(Math.random() < 0.5 ? 'english.wav' : 'jfk.wav'), language: 'en', model_size: 'tiny', output_format: ['json', 'srt', 'vtt'][Math.floor(Math.random() * 3)] })),
    job('translate', 0.4, '/v1/translate', () => ({ url: speech.url('jfk.wav'), source_language: 'en', target_language: 'es', model_size: 'tiny' })),
    job('download nomedia (fails, refunded)', 0.4, '/v1/download', () => ({ url: fx.url('/watch/nomedia') })),
    job('download cancelled (refunded)', 0.4, '/v1/download', () => ({ url: fx.url('/slow/v480.mp4') }), 2500),
    {
      label: 'info',
      weight: 3,
      run: async (a) => {
        const res = await call(a.key, 'GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/trailer'))}`, { kind: 'info' });
        if (res?.status === 200) a.infoCharged++;
        else if (res && res.status < 500) unexpected.push(`info answered ${res.status}`);
      },
    },
    {
      label: 'upload + job',
      weight: 1.5,
      run: async (a) => {
        const file = path.join(fixtureCacheDir(), 'media/v480.mp4');
        const up = await call(a.key, 'POST', '/v1/uploads', { kind: 'upload', body: fs.readFileSync(file), headers: { 'content-type': 'video/mp4', 'content-disposition': 'attachment; filename="soak clip.mp4"' } });
        if (!up || up.status !== 201) {
          if (up && up.status < 500) unexpected.push(`upload answered ${up.status}`);
          return;
        }
        const [p, body] = Math.random() < 0.5 ? ['/v1/preview', { preview_type: 'thumbnail' }] : ['/v1/waveform', { points: 200 }];
        await createJob(w, a, `${p.slice(4)} of an upload`, p, { upload_id: up.body.upload_id, ...body });
      },
    },
    {
      label: 'openai transcription',
      weight: 0.3,
      run: async (a) => {
        const form = new FormData();
        form.append('file', new Blob([fs.readFileSync(path.join(SPEECH_DIR, 'jfk.wav'))], { type: 'audio/wav' }), 'jfk.wav');
        form.append('model', 'tiny.en');
        const res = await call(a.key, 'POST', '/v1/audio/transcriptions', { kind: 'openai transcription', body: form, timeoutMs: 400_000 });
        const id = res?.headers.get('mediasvc-job-id');
        if (id) tracked.set(id, { id, account: a, label: 'openai transcription', createdAt: Date.now(), webhookUrl: null, status: res!.status === 200 ? 'completed' : 'pending', done: res!.status === 200 });
        if (res && res.status !== 200 && res.status < 500) unexpected.push(`openai transcription answered ${res.status}`);
        if (id && res!.status !== 200) await follow(w, tracked.get(id)!);
      },
    },
  ];
}

/** Creates a job every 2–4 s across both accounts while fewer than MAX_IN_FLIGHT are under way. */
async function loadLoop(w: World, until: () => boolean, paused: () => boolean): Promise<void> {
  const ops = operations(w);
  const total = ops.reduce((s, o) => s + o.weight, 0);
  const running = new Set<Promise<void>>();
  let n = 0;
  while (!until()) {
    await sleep(2000 + Math.random() * 2000);
    if (until()) break;
    if (paused() || inFlight >= MAX_IN_FLIGHT) {
      skipped++;
      continue;
    }
    let r = Math.random() * total;
    const op = ops.find((o) => (r -= o.weight) < 0) ?? ops[0]!;
    const a = w.accounts[n++ % 2]!;
    inFlight++;
    const p = op
      .run(a)
      .catch((err) => void unexpected.push(`${op.label}: ${String(err)}`))
      .finally(() => {
        inFlight--;
        running.delete(p);
      });
    running.add(p);
  }
  await Promise.all(running);
}

/** A few reads a second: job lists (filtered, paged), single jobs, the account, webhook deliveries, expired links. */
async function readLoop(w: World, until: () => boolean): Promise<void> {
  let i = 0;
  let lastTest = Date.now();
  const cursors = new Map<Account, string | null>();
  while (!until()) {
    if (Date.now() - lastTest > (WINDOW_MIN / 2) * 60_000) {
      // the endpoint's test event (a synthetic job.completed), now and then
      lastTest = Date.now();
      const a = w.accounts[0];
      const res = await call(a.key, 'POST', `/v1/webhooks/${a.endpointId}/test`, { kind: 'webhook test' });
      if (res && res.status >= 300 && res.status < 500) unexpected.push(`webhook test answered ${res.status}`);
      else if (res && res.status < 300) webhookTests++;
    }
    await sleep(250 + Math.random() * 150);
    const a = w.accounts[i++ % 2]!;
    const pick = i % 10;
    if (pick < 4) {
      const filter = pick === 1 ? '&status=completed' : pick === 2 ? '&job_type=preview' : '';
      const cursor = pick === 3 ? cursors.get(a) : null;
      const res = await call(a.readKey, 'GET', `/v1/jobs?limit=20${filter}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { kind: 'reads' });
      if (res?.status === 200 && pick === 3) cursors.set(a, res.body.has_more ? res.body.next_cursor : null);
      else if (res && res.status !== 200 && res.status < 500) unexpected.push(`GET /v1/jobs answered ${res.status}`);
    } else if (pick < 8) {
      const own = [...tracked.values()].filter((j) => j.account === a);
      const job = own[Math.floor(Math.random() * own.length)];
      if (!job) continue;
      const res = await call(a.readKey, 'GET', `/v1/jobs/${job.id}`, { kind: 'reads' });
      if (res && res.status !== 200 && res.status < 500) unexpected.push(`GET /v1/jobs/{id} answered ${res.status}`);
    } else if (pick === 8) {
      await call(a.readKey, 'GET', '/v1/account', { kind: 'reads' });
      if (a.endpointId !== null && i % 40 === 8) await call(a.readKey, 'GET', `/v1/webhooks/${a.endpointId}/deliveries`, { kind: 'reads' });
    } else {
      const link = expiredLinks.find((l) => l.expiresAt < Date.now() - 1000);
      if (!link) continue;
      expiredLinks.splice(expiredLinks.indexOf(link), 1);
      const res = await call(null, 'GET', link.url, { raw: true });
      if (res?.status === 410) fileChecks.expiredGone++;
      else if (res) {
        fileChecks.expiredServed++;
        unexpected.push(`expired link answered ${res.status}`);
      }
    }
  }
}

/** The service's long-lived processes by role: serve's Node (API, control, webhooks), the tool workers' Node, the dev server, the speech runner. */
function classify(pgid: number, pid: string, comm: string): string | null {
  if (Number(pid) === pgid) return 'serve Node (API, control, webhooks)';
  if (comm === 'node') return 'media workers Node';
  if (comm === 'temporal') return 'Temporal dev server';
  return null;
}

function countFds(pid: string): number {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

function duBytes(p: string): number {
  let total = 0;
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.size;
  for (const name of fs.readdirSync(p)) total += duBytes(path.join(p, name));
  return total;
}

const dateMs = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' ? (/^\d+$/.test(v) ? Number(v) : Date.parse(v)) : NaN);

async function sample(w: World): Promise<Sample> {
  const pgid = w.stack.svc.child.pid!;
  const procs: ProcSample[] = [];
  let tools = 0;
  for (const { pid, comm } of groupProcesses(pgid)) {
    const label = classify(pgid, pid, comm) ?? (/python/.test(comm) && longLived(pid) ? 'speech runner (Python)' : null);
    if (!label) {
      tools++;
      continue;
    }
    const rss = processRss(pid);
    if (rss !== null) procs.push({ pid, label, rss, fds: countFds(pid) });
  }
  const dir = w.stack.dataDir;
  const dataDir: Record<string, number> = { total: duBytes(dir) };
  for (const name of fs.readdirSync(dir)) dataDir[name] = duBytes(path.join(dir, name));
  const now = Date.now();
  const db = path.join(dir, 'mediasvc.sqlite');
  const jobs = await querySqlite<{ id: string; status: string; expires_at: unknown }>(db, 'select id, status, expires_at from jobs');
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const outputs = { live: 0, awaitingSweep: 0, overdue: 0, orphan: 0, liveBytes: 0, awaitingBytes: 0, overdueBytes: 0, orphanBytes: 0 };
  const filesDir = path.join(dir, 'files');
  for (const name of fs.existsSync(filesDir) ? fs.readdirSync(filesDir) : []) {
    const bytes = duBytes(path.join(filesDir, name));
    const job = byId.get(name);
    const exp = job ? dateMs(job.expires_at) : NaN;
    // a running job writes its output before its row says completed
    if (job && (job.status === 'pending' || job.status === 'processing')) (outputs.live++, (outputs.liveBytes += bytes));
    else if (!job || job.status !== 'completed') (outputs.orphan++, (outputs.orphanBytes += bytes));
    else if (exp > now) (outputs.live++, (outputs.liveBytes += bytes));
    else if (exp > now - SWEEP_GRACE_MS) (outputs.awaitingSweep++, (outputs.awaitingBytes += bytes));
    else (outputs.overdue++, (outputs.overdueBytes += bytes));
  }
  const uploadRows = await querySqlite<{ id: string; expires_at: unknown }>(db, 'select id, expires_at from uploads');
  const uploadsDir = path.join(dir, 'uploads');
  const uploadFiles = fs.existsSync(uploadsDir) ? fs.readdirSync(uploadsDir).filter((n) => !n.startsWith('.')) : [];
  const uploads = { files: uploadFiles.length, live: uploadRows.filter((u) => dateMs(u.expires_at) > now).length, overdue: uploadRows.filter((u) => dateMs(u.expires_at) < now - SWEEP_GRACE_MS).length };
  return { t: now, procs, tools, dataDir, outputs, uploads, inFlight };
}

const firstSeen = new Map<string, number>();
/** A process seen for over a minute is one of the service's own (a tool lives seconds). */
function longLived(pid: string): boolean {
  const seen = firstSeen.get(pid) ?? Date.now();
  firstSeen.set(pid, seen);
  return Date.now() - seen > 60_000;
}

/** Waits until no job of the load is under way and no tool runs, then lets the heap settle. */
async function quiesce(w: World, maxMs = 300_000): Promise<boolean> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    const busy = inFlight > 0 || [...tracked.values()].some((j) => !j.done);
    const tools = groupProcesses(w.stack.svc.child.pid!).filter((p) => /ffmpeg|ffprobe|yt-dlp/.test(p.comm)).length;
    if (!busy && tools === 0) {
      await sleep(15_000);
      return true;
    }
    await sleep(1000);
  }
  return false;
}

/** RSS and fds of each long-lived process, median of three readings 2 s apart. */
async function settled(w: World): Promise<Map<string, { rss: number; fds: number }>> {
  const reads: Sample[] = [];
  for (let i = 0; i < 3; i++) {
    reads.push(await sample(w));
    await sleep(2000);
  }
  const out = new Map<string, { rss: number; fds: number }>();
  for (const label of new Set(reads.flatMap((s) => s.procs.map((p) => p.label)))) {
    const mine = reads.flatMap((s) => s.procs.filter((p) => p.label === label));
    out.set(label, { rss: median(mine.map((p) => p.rss)), fds: median(mine.map((p) => p.fds)) });
  }
  return out;
}

async function setUp(): Promise<World> {
  const slowFile = path.join(fixtureCacheDir(), 'media/v480.mp4');
  const fx = await startFixturePlatform({
    // a slow origin (20 kB/s) so a cancellation lands while the download runs
    extraRoutes: (req, res, pathname) => (pathname === '/slow/v480.mp4' ? (serveThrottled(res, slowFile, 20_000), true) : false),
  });
  const [speech, pt, hooks] = await Promise.all([serveSpeechFiles(), startPeerTubeFixture(), startReceiver()]);
  const stack = await startServeStack({ name: 'soak-a', plan: 'business', env: { DOWNLOAD_URL_TTL_MINUTES: String(TTL_MIN), LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' } });
  base = stack.base;
  const makeAccount = async (name: string, id: string, key: string): Promise<Account> => {
    const readKey = (await cli(stack.env, 'keys', 'create', '--account', id, '--name', `${name} reads`)).pop()!;
    const startCredits = Number((await cli(stack.env, 'accounts', 'credits', id)).pop());
    return { name, id, key, readKey, startCredits, infoCharged: 0, endpointId: null, endpointSecret: null };
  };
  const a = await makeAccount('soak-a (business)', stack.accountId, stack.key);
  const idB = (await cli(stack.env, 'accounts', 'create', '--name', 'soak-b', '--plan', 'growth')).pop()!;
  const keyB = (await cli(stack.env, 'keys', 'create', '--account', idB, '--name', 'soak-b key')).pop()!;
  const b = await makeAccount('soak-b (growth)', idB, keyB);
  // A's endpoint hears every event; B's only failures (B's jobs carry a per-job webhook_url as well)
  for (const [acct, events] of [[a, []], [b, ['job.failed']]] as const) {
    const res = await call(acct.key, 'POST', '/v1/webhooks', { json: { url: hooks.url(acct === a ? '/account-a' : '/account-b'), events } });
    if (res?.status !== 201) throw new Error(`POST /v1/webhooks answered ${res?.status} ${JSON.stringify(res?.body)}`);
    acct.endpointId = res.body.id;
    acct.endpointSecret = res.body.secret;
  }
  return { stack, fx, speech, pt, hooks, accounts: [a, b] };
}

/** Pauses the Temporal dev server (SIGSTOP) for FAULT_S: the API must answer 503 or succeed, never another 5xx. */
async function injectFault(w: World): Promise<void> {
  const temporal = groupProcesses(w.stack.svc.child.pid!).find((p) => p.comm === 'temporal');
  if (!temporal || FAULT_S <= 0) return;
  console.log(`[soak] ${f1(elapsedMin())} min: fault: the Temporal dev server (pid ${temporal.pid}) paused for ${FAULT_S} s`);
  fault = { start: Date.now(), end: Date.now() + FAULT_S * 1000 };
  process.kill(Number(temporal.pid), 'SIGSTOP');
  try {
    await sleep(FAULT_S * 1000);
  } finally {
    process.kill(Number(temporal.pid), 'SIGCONT');
  }
  fault.end = Date.now();
  console.log(`[soak] ${f1(elapsedMin())} min: fault over, the dev server resumed`);
}

/** Polls /readyz every 5 s: a 503 there outside the fault is a finding too. */
async function readyLoop(until: () => boolean): Promise<{ notReady: number; notReadyOutsideFault: number }> {
  const out = { notReady: 0, notReadyOutsideFault: 0 };
  while (!until()) {
    const started = Date.now();
    try {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      if (res.status !== 200) {
        out.notReady++;
        if (!inFault(started)) out.notReadyOutsideFault++;
      }
    } catch {
      out.notReady++;
      if (!inFault(started)) out.notReadyOutsideFault++;
    }
    await sleep(5000);
  }
  return out;
}

function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

async function main(): Promise<void> {
  console.log(`[soak] ${MINUTES} min, windows of ${WINDOW_MIN} min, warm-up ${f1(WARMUP_MIN)} min, samples every ${SAMPLE_S} s, links live ${TTL_MIN} min, fault ${FAULT_S} s at mid-run`);
  const w = await setUp();
  const { stack } = w;
  console.log(`[soak] serve pid ${stack.svc.child.pid} on ${stack.base}, DATA_DIR ${stack.dataDir}`);
  const endAt = t0 + MINUTES * 60_000;
  let stopping = false;
  let pausedForWarmup = false;
  const until = () => stopping || Date.now() >= endAt;
  const samples: Sample[] = [];
  const load = loadLoop(w, until, () => pausedForWarmup);
  const reads = readLoop(w, until);
  const ready = readyLoop(until);
  let warmup: Map<string, { rss: number; fds: number }> | null = null;
  let warmupAt = 0;
  let faultDone = false;
  let serveExit: number | null | undefined;
  void stack.svc.exited.then((code) => {
    serveExit = code;
  });
  while (!until()) {
    if (serveExit !== undefined) throw new Error(`serve exited (code ${serveExit}) at ${f1(elapsedMin())} min; its log: ${stack.svc.logFile}\n${fs.readFileSync(stack.svc.logFile, 'utf8').slice(-3000)}`);
    const s = await sample(w);
    samples.push(s);
    const procLine = s.procs.map((p) => `${p.label.split(' ')[0]} ${f1(MB(p.rss))} MB/${p.fds} fds`).join(', ');
    console.log(`[soak] ${f1(elapsedMin())} min: ${procLine}; DATA_DIR ${f1(MB(s.dataDir.total!))} MB (outputs live ${s.outputs.live}, awaiting sweep ${s.outputs.awaitingSweep}, overdue ${s.outputs.overdue}); jobs ${tracked.size}, in flight ${s.inFlight}; 5xx ${serverErrors.length}`);
    if (!warmup && elapsedMin() >= WARMUP_MIN) {
      // a settled reading at the warm-up's end: the end's reading is taken the same way, so fds compare like for like
      pausedForWarmup = true;
      await quiesce(w);
      warmup = await settled(w);
      warmupAt = Date.now();
      pausedForWarmup = false;
      console.log(`[soak] ${f1(elapsedMin())} min: warm-up over, settled: ${[...warmup].map(([l, v]) => `${l} ${f1(MB(v.rss))} MB, ${v.fds} fds`).join('; ')}`);
    }
    if (!faultDone && elapsedMin() >= MINUTES / 2) {
      faultDone = true;
      await injectFault(w);
    }
    await sleep(Math.max(0, Math.min(SAMPLE_S * 1000, endAt - Date.now())));
  }
  stopping = true;
  console.log(`[soak] ${f1(elapsedMin())} min: load stopped; draining`);
  await Promise.all([load, reads]);
  const readiness = await ready;
  const drained = await quiesce(w);
  // late webhook deliveries land within a few seconds of a job's end
  await sleep(10_000);
  const end = await settled(w);
  const finalSample = await sample(w);
  samples.push(finalSample);

  // ---- ledger, straight from the database
  const db = path.join(stack.dataDir, 'mediasvc.sqlite');
  const ledgerLines: string[] = [];
  let ledgerExact = true;
  for (const acct of w.accounts) {
    const jobs = await querySqlite<{ id: string; status: string; credits_charged: number }>(db, 'select id, status, credits_charged from jobs where account_id = ?', [acct.id]);
    const entries = await querySqlite<{ job_id: string | null; kind: string; amount: number }>(db, 'select job_id, kind, amount from credit_entries where account_id = ?', [acct.id]);
    const [row] = await querySqlite<{ balance: number }>(db, 'select balance from accounts where id = ?', [acct.id]);
    const cliBalance = Number((await cli(stack.env, 'accounts', 'credits', acct.id)).pop());
    const byJob = new Map<string, { charge: number[]; refund: number[] }>();
    for (const e of entries) {
      if (!e.job_id) continue;
      const x = byJob.get(e.job_id) ?? { charge: [], refund: [] };
      (e.kind === 'charge' ? x.charge : x.refund).push(e.amount);
      byJob.set(e.job_id, x);
    }
    let bad = 0;
    for (const j of jobs) {
      const x = byJob.get(j.id) ?? { charge: [], refund: [] };
      const ok = x.charge.length === 1 && x.charge[0] === -j.credits_charged && x.refund.length === (j.status === 'failed' ? 1 : 0) && (j.status !== 'failed' || x.refund[0] === j.credits_charged);
      if (!ok || !['completed', 'failed'].includes(j.status)) bad++;
    }
    const strays = [...byJob.keys()].filter((id) => !jobs.some((j) => j.id === id)).length;
    const infoRows = entries.filter((e) => !e.job_id && e.kind === 'charge').length;
    const spent = jobs.filter((j) => j.status !== 'failed').reduce((s, j) => s + j.credits_charged, 0);
    const expected = acct.startCredits - spent - acct.infoCharged;
    const ledgerSum = entries.reduce((s, e) => s + e.amount, 0);
    const exact = bad === 0 && strays === 0 && infoRows === acct.infoCharged && cliBalance === expected && row?.balance === expected && ledgerSum === expected;
    ledgerExact &&= exact;
    const failed = jobs.filter((j) => j.status === 'failed').length;
    ledgerLines.push(
      `${acct.name}: ${jobs.length} jobs (${jobs.length - failed} completed, ${failed} failed and refunded), ${acct.infoCharged} info reads charged (ledger: ${infoRows}); ` +
        `jobs charged other than once, or refunded other than iff failed: ${bad}; entries for unknown jobs: ${strays}; ` +
        `balance ${cliBalance} = ${acct.startCredits} − ${spent} (completed jobs) − ${acct.infoCharged} (info) = ${expected}; ledger sum ${ledgerSum}, balance column ${row?.balance}: ${exact ? 'exact' : 'NOT EXACT'}`,
    );
  }

  // ---- webhooks: one event per job and target, matching its end, never two
  const events = new Map<string, { path: string; event: string }[]>();
  let badSignatures = 0;
  let testEvents = 0;
  for (const r of w.hooks.received) {
    let body: any;
    try {
      body = JSON.parse(r.body);
    } catch {
      continue;
    }
    const id = body?.data?.job_id as string;
    const acct = r.path === '/account-a' ? w.accounts[0] : r.path === '/account-b' ? w.accounts[1] : null;
    if (acct?.endpointSecret) {
      const sig = crypto.createHmac('sha256', acct.endpointSecret).update(r.body).digest('hex');
      if (sig !== r.headers['x-service-signature']) badSignatures++;
    }
    if (!tracked.has(id)) {
      testEvents++;
      continue;
    }
    events.set(id, [...(events.get(id) ?? []), { path: r.path, event: body.event }]);
  }
  let duplicates = 0;
  let missing = 0;
  let mismatched = 0;
  for (const job of tracked.values()) {
    const got = events.get(job.id) ?? [];
    const targets: string[] = [];
    if (job.account === w.accounts[0]) targets.push('/account-a');
    if (job.account === w.accounts[1] && job.status === 'failed') targets.push('/account-b');
    if (job.webhookUrl) targets.push('/job');
    for (const t of targets) {
      const mine = got.filter((e) => e.path === t);
      if (mine.length > 1) duplicates++;
      if (mine.length === 0) missing++;
      if (mine.some((e) => e.event !== `job.${job.status}`)) mismatched++;
    }
    for (const e of got) if (!targets.includes(e.path)) mismatched++;
  }
  const webhooksOk = duplicates === 0 && missing === 0 && mismatched === 0 && badSignatures === 0 && testEvents === webhookTests;

  // ---- memory and fds over time
  const after = samples.filter((s) => s.t >= (warmupAt || t0 + WARMUP_MIN * 60_000));
  const labels = [...new Set(samples.flatMap((s) => s.procs.map((p) => p.label)))];
  const memLines: string[][] = [];
  let memFlat = true;
  let fdsFlat = true;
  for (const label of labels) {
    const series = after.map((s) => ({ t: s.t, p: s.procs.find((p) => p.label === label) })).filter((x): x is { t: number; p: ProcSample } => !!x.p);
    if (series.length < 2) continue;
    const first = series.filter((x) => x.t <= series[0]!.t + EDGE_MIN * 60_000).map((x) => x.p.rss);
    const last = series.filter((x) => x.t >= series.at(-1)!.t - EDGE_MIN * 60_000).map((x) => x.p.rss);
    const change = (median(last) - median(first)) / median(first);
    const mbPerHour = slope(series.map((x) => [(x.t - t0) / 3_600_000, MB(x.p.rss)]));
    const fdSlope = slope(series.map((x) => [(x.t - t0) / 3_600_000, x.p.fds]));
    const w0 = warmup?.get(label);
    const e0 = end.get(label);
    const fdGrowth = w0 && e0 ? e0.fds - w0.fds : NaN;
    const settledChange = w0 && e0 ? (e0.rss - w0.rss) / w0.rss : NaN;
    const flat = Math.abs(change) <= 0.1;
    const fdOk = !(fdGrowth > FD_SLACK);
    memFlat &&= flat;
    fdsFlat &&= fdOk;
    memLines.push([
      label,
      `${f1(MB(median(first)))} → ${f1(MB(median(last)))} MB (${change >= 0 ? '+' : ''}${f1(change * 100)} %)`,
      `${mbPerHour >= 0 ? '+' : ''}${f1(mbPerHour)} MB/h`,
      w0 && e0 ? `${f1(MB(w0.rss))} → ${f1(MB(e0.rss))} MB (${settledChange >= 0 ? '+' : ''}${f1(settledChange * 100)} %)` : '–',
      `${f1(Math.min(...series.map((x) => MB(x.p.rss))))}–${f1(Math.max(...series.map((x) => MB(x.p.rss))))} MB`,
      w0 && e0 ? `${w0.fds} → ${e0.fds}` : '–',
      `${Math.min(...series.map((x) => x.p.fds))}–${Math.max(...series.map((x) => x.p.fds))} (${fdSlope >= 0 ? '+' : ''}${f1(fdSlope)}/h)`,
    ]);
  }

  // ---- DATA_DIR against the outputs still live
  const overdueMax = Math.max(...samples.map((s) => s.outputs.overdue + s.outputs.orphan));
  const uploadsOverdueMax = Math.max(...samples.map((s) => s.uploads.overdue));
  const workLeft = finalSample.dataDir.work ?? 0;
  const dataOk = overdueMax === 0 && uploadsOverdueMax === 0 && workLeft === 0;

  // ---- latency per window
  const windows = Math.ceil(MINUTES / WINDOW_MIN);
  const header = ['What', ...Array.from({ length: windows }, (_, i) => `${i * WINDOW_MIN}–${Math.min(MINUTES, (i + 1) * WINDOW_MIN)} min`)];
  const order = ['reads', 'create', 'info', 'upload', 'result download', 'webhook test', 'openai transcription'];
  const kinds = [...latencies.keys()].sort((x, y) => (order.indexOf(x) + 1 || 99) - (order.indexOf(y) + 1 || 99) || x.localeCompare(y));
  const latRows = kinds.map((k) => {
    const byW = latencies.get(k)!;
    const unit = k.startsWith('job:') || k === 'openai transcription' ? (ms: number) => `${(ms / 1000).toFixed(2)} s` : (ms: number) => `${ms.toFixed(0)} ms`;
    return [
      k.startsWith('job:') ? `${k.slice(4)} job, created → completed` : k,
      ...Array.from({ length: windows }, (_, i) => {
        const xs = byW.get(i) ?? [];
        return xs.length ? `${unit(percentile(xs, 50))} / ${unit(percentile(xs, 99))} (${xs.length})` : '–';
      }),
    ];
  });

  const non503 = serverErrors.filter((e) => e.status !== 503);
  const outside = serverErrors.filter((e) => e.status === 503 && !inFault(e.at));
  const during = serverErrors.filter((e) => e.status === 503 && inFault(e.at));
  const netOutside = networkErrors.filter((e) => !inFault(e.at));
  const fiveOk = non503.length === 0 && outside.length === 0 && netOutside.length === 0;
  const jobsOk = drained && unexpected.length === 0;

  const peak = (k: keyof Sample['outputs']) => Math.max(...samples.map((s) => s.outputs[k]));
  const lines = [
    '',
    `=== soak summary: ${f1(elapsedMin())} min (load ${MINUTES} min), ${tracked.size} jobs, ${[...statusCounts.values()].reduce((a, b) => a + b, 0)} requests, ${skipped} ticks skipped at the in-flight bound (${MAX_IN_FLIGHT}) or paused ===`,
    '',
    `Memory of each process after warm-up (${f1(WARMUP_MIN)} min; under load: median of the first vs the last ${f1(EDGE_MIN)} min; settled: no job running, at warm-up end vs the end):`,
    table(['Process', 'RSS under load, warm-up end → end', 'Slope', 'RSS settled, warm-up end → end', 'Range', 'Open fds settled', 'Open fds under load (slope)'], memLines),
    '',
    'RSS over time (MB, every sample):',
    ...labels.map((l) => `  ${l}: ${samples.map((s) => s.procs.find((p) => p.label === l)).map((p) => (p ? MB(p.rss).toFixed(0) : '·')).join(' ')}`),
    'Open fds over time:',
    ...labels.map((l) => `  ${l}: ${samples.map((s) => s.procs.find((p) => p.label === l)).map((p) => (p ? String(p.fds) : '·')).join(' ')}`),
    '',
    `DATA_DIR: ${f1(MB(samples[0]!.dataDir.total!))} MB at the first sample, peak ${f1(MB(Math.max(...samples.map((s) => s.dataDir.total!))))} MB, ${f1(MB(finalSample.dataDir.total!))} MB at the end (${Object.entries(finalSample.dataDir).filter(([k]) => k !== 'total').map(([k, v]) => `${k} ${f1(MB(v))}`).join(', ')})`,
    `  outputs on disk at the end: ${finalSample.outputs.live} live (${f1(MB(finalSample.outputs.liveBytes))} MB), ${finalSample.outputs.awaitingSweep} expired within the sweep interval (${f1(MB(finalSample.outputs.awaitingBytes))} MB); peak live ${peak('live')}, peak awaiting sweep ${peak('awaitingSweep')}`,
    `  outputs expired more than ${SWEEP_GRACE_MS / 60_000} min, or of no completed job, still on disk: max ${overdueMax} over ${samples.length} samples; uploads expired and not swept: max ${uploadsOverdueMax}; upload files at the end ${finalSample.uploads.files} (live rows ${finalSample.uploads.live}); work/ at the end ${workLeft} bytes`,
    `  outputs on disk over time (live+awaiting): ${samples.map((s) => s.outputs.live + s.outputs.awaitingSweep).join(' ')}`,
    `  results downloaded ${fileChecks.downloads} (${f1(MB(fileChecks.bytes))} MB, ${fileChecks.ranges} ranged), expired links answered 410: ${fileChecks.expiredGone}, still served: ${fileChecks.expiredServed}`,
    '',
    `p50 / p99 (count) per ${WINDOW_MIN}-minute window, by when the request or job started:`,
    table(header, latRows),
    '',
    `HTTP statuses: ${[...statusCounts].sort((x, y) => x[0] - y[0]).map(([s, n]) => `${s}×${n}`).join(', ')}`,
    `5xx: ${serverErrors.length} (503 during the injected fault: ${during.length}; 503 outside it: ${outside.length}; other 5xx: ${non503.length}); connection errors: ${networkErrors.length} (outside the fault: ${netOutside.length}); /readyz not ready: ${readiness.notReady} polls (outside the fault: ${readiness.notReadyOutsideFault})`,
    ...[...non503, ...outside].slice(0, 10).map((e) => `  ${f1(elapsedMin(e.at))} min ${e.status} ${e.what}: ${e.detail}`),
    ...netOutside.slice(0, 10).map((e) => `  ${f1(elapsedMin(e.at))} min ${e.what}: ${e.detail}`),
    fault ? `Fault: Temporal dev server paused ${f1((fault.end - fault.start) / 1000)} s at ${f1(elapsedMin(fault.start))} min` : 'Fault: none injected',
    '',
    'Ledger:',
    ...ledgerLines.map((l) => `  ${l}`),
    `Webhooks: ${w.hooks.received.length} deliveries received (${testEvents} of ${webhookTests} endpoint tests); per job and target: duplicates ${duplicates}, missing ${missing}, wrong event or target ${mismatched}; bad signatures ${badSignatures}`,
    `Jobs: drained ${drained ? 'yes' : 'NO'}; unexpected outcomes ${unexpected.length}`,
    ...unexpected.slice(0, 15).map((u) => `  ${u}`),
    '',
    `CHECK memory flat within 10 % after warm-up: ${memFlat ? 'PASS' : 'FAIL'}`,
    `CHECK no growth in open fds (settled, more than ${FD_SLACK}): ${fdsFlat ? 'PASS' : 'FAIL'}`,
    `CHECK 0 × 5xx other than 503 during the injected fault: ${fiveOk ? 'PASS' : 'FAIL'}`,
    `CHECK ledger exact: ${ledgerExact ? 'PASS' : 'FAIL'}`,
    `CHECK expired outputs and uploads gone, no scratch left: ${dataOk ? 'PASS' : 'FAIL'}`,
    `CHECK webhooks: one event per job and target: ${webhooksOk ? 'PASS' : 'FAIL'}`,
    `CHECK every job ended as expected: ${jobsOk ? 'PASS' : 'FAIL'}`,
  ];
  console.log(lines.join('\n'));
  if (process.env.SOAK_OUT) fs.writeFileSync(process.env.SOAK_OUT, JSON.stringify({ samples, warmup: warmup && [...warmup], end: [...end] }, null, 1));

  // SIGTERM, as Ctrl-C would: serve must still stop cleanly after the hour
  const exitCode = await stopService(stack.svc);
  console.log(`serve stopped with exit code ${exitCode}${process.env.SOAK_KEEP_DATA === '1' ? `; data kept in ${stack.dataDir}` : ''}`);
  if (process.env.SOAK_KEEP_DATA !== '1') fs.rmSync(stack.dataDir, { recursive: true, force: true });
  await Promise.all([w.fx.close(), w.speech.close(), w.pt.close(), w.hooks.close()]);
  const ok = memFlat && fdsFlat && fiveOk && ledgerExact && dataOk && webhooksOk && jobsOk && exitCode === 0;
  process.exit(ok ? 0 : 1);
}

main().catch((err) => {
  console.error('[soak] failed:', err);
  process.exit(2);
});
