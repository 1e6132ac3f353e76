// yt-dlp runs forked from a warm process (engines/ytdlp/warm-runs.ts) against runs started fresh: real
// yt-dlp on loopback origins. What a caller sees must not change: the output, the exit code, progress
// lines, plugins, cancel; a warm process that dies costs nothing but its speed.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { loadConfig } from '../lib/config';
import { launchOf, runYtdlp, ytdlpRunCounts } from '../engines/ytdlp/warm-runs';
import { ytdlpInvocation } from '../engines/ytdlp/ytdlp.engine';
import { YTDLP_PLUGIN_DIR } from './helpers/ytdlp-comments-fixture';
import { waitFor } from './helpers/processes';

const run = promisify(execFile);

/** Processes whose command line holds `text` (pgrep exits 1 when none does). */
function processesWith(text: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', text]).toString().trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** A process's parent, from /proc (its fourth field, after the name in parentheses). */
function parentOf(pid: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1];
  } catch {
    return undefined;
  }
}

describe('yt-dlp forked from a warm process: the same runs as fresh ones (real yt-dlp, loopback only)', function () {
  this.timeout(120_000);
  const config = loadConfig({ ...process.env, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'ytdlp-warm-data-')) });
  const binary = config.ytdlpPath;
  const invocation = ytdlpInvocation({ binary, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, denoPath: config.denoPath });
  let dir: string;
  let media: Buffer;
  let base: string;
  let server: http.Server;
  const slowRequests: http.ServerResponse[] = [];

  /** Runs `--version` on `launcher` until a run is forked from its warm process (the first starts it). */
  const untilForked = (launcher: string, what: string) =>
    waitFor(
      what,
      async () => {
        const before = ytdlpRunCounts().forked;
        await runYtdlp(launcher, { warm: true, ...invocation('', ['--version']) });
        return ytdlpRunCounts().forked > before ? true : undefined;
      },
      60_000,
      500,
    );

  const runBoth = async (own: string[], extra: { onLine?: (line: string, stream: 'stdout' | 'stderr') => void } = {}) => {
    const before = ytdlpRunCounts();
    const fresh = await runYtdlp(binary, { ...invocation('', own), ...extra, warm: false });
    const warm = await runYtdlp(binary, { warm: true, ...invocation('', own), ...extra });
    const after = ytdlpRunCounts();
    assert.equal(after.forked - before.forked, 1, `the second run was forked: ${JSON.stringify({ before, after })}`);
    return { fresh, warm };
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ytdlp-warm-'));
    const file = path.join(dir, 'clip.mp4');
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440', '-t', '4', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart', file]);
    media = fs.readFileSync(file);
    server = http.createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/clip.mp4') return void res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': media.length }).end(media);
      if (url.startsWith('/slow/')) {
        // the headers and a first piece, then nothing: a download that only a cancel ends
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': media.length });
        res.write(media.subarray(0, 4096));
        slowRequests.push(res);
        return;
      }
      const api = /^\/chaptered\/api\/([\w-]+)$/.exec(url);
      if (api) {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ title: `chaptered ${api[1]}`, duration: 4, media: '/clip.mp4', chapters: [{ start_time: 0, end_time: 2, title: 'one' }, { start_time: 2, end_time: 4, title: 'two' }] }));
      }
      res.writeHead(404).end('not here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // the first run starts the warm process; runs are forked from it once it is ready
    await untilForked(binary, 'the warm yt-dlp process');
  });

  after(async () => {
    for (const res of slowRequests) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads a source to the same JSON, with exit code 0', async () => {
    const { fresh, warm } = await runBoth(['--dump-single-json', '--', `${base}/clip.mp4`]);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(warm.code, 0, warm.stderr);
    // what differs between any two runs: the read's clock, and the browser User-Agent each run draws
    const facts = (stdout: string) => {
      const { epoch: _epoch, ...rest } = JSON.parse(stdout) as Record<string, unknown>;
      return JSON.parse(JSON.stringify(rest).replace(/Chrome\/\d+/g, 'Chrome/N')) as Record<string, unknown>;
    };
    assert.deepEqual(facts(warm.stdout), facts(fresh.stdout));
    assert.equal(facts(warm.stdout).id, 'clip');
  });

  it('each forked run draws its own User-Agent, as each fresh process does', async () => {
    const agents = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const res = await runYtdlp(binary, { warm: true, ...invocation('', ['--dump-single-json', '--', `${base}/clip.mp4`]) });
      agents.add((JSON.parse(res.stdout) as { http_headers: Record<string, string> }).http_headers['User-Agent']!);
    }
    // one of 7 Chrome versions each time: 8 runs alike by chance once in 7^7
    assert.ok(agents.size > 1, `8 runs, User-Agents: ${[...agents].join(' | ')}`);
  });

  it('fails a missing source with the same exit code and ERROR line', async () => {
    const { fresh, warm } = await runBoth(['--dump-single-json', '--', `${base}/missing.mp4`]);
    assert.equal(fresh.code, 1);
    assert.equal(warm.code, 1, warm.stderr);
    const errorLine = (stderr: string) => stderr.split('\n').find((l) => l.startsWith('ERROR:'));
    assert.match(errorLine(warm.stderr) ?? '', /404/);
    assert.equal(errorLine(warm.stderr), errorLine(fresh.stderr));
  });

  it('downloads the whole file, its progress lines arriving as it goes', async () => {
    for (const warm of [false, true]) {
      const out = path.join(dir, `out-${warm}`);
      const lines: string[] = [];
      const res = await runYtdlp(binary, {
        ...invocation('', ['--newline', '--progress', '--no-simulate', '--progress-template', 'download:MEDIASVC-PROGRESS %(progress.downloaded_bytes)s', '-o', path.join(out, '%(id)s.%(ext)s'), '--print', 'after_move:filepath', '--', `${base}/clip.mp4`]),
        warm,
        onLine: (l) => lines.push(l),
      });
      assert.equal(res.code, 0, res.stderr);
      const saved = res.stdout.trim().split('\n').at(-1)!;
      assert.ok(fs.readFileSync(saved).equals(media), `warm=${warm}: the saved file is the source`);
      assert.ok(lines.some((l) => l === `MEDIASVC-PROGRESS ${media.length}`), `warm=${warm}: progress to the last byte: ${lines.filter((l) => l.startsWith('MEDIASVC')).join(' | ')}`);
    }
  });

  it("loads a run's own plugin folders (--plugin-dirs): a plugin extractor's chapters", async () => {
    const { fresh, warm } = await runBoth(['--plugin-dirs', YTDLP_PLUGIN_DIR, '--dump-single-json', '--', `${base}/chaptered/watch/abc`]);
    assert.equal(warm.code, 0, warm.stderr);
    const info = JSON.parse(warm.stdout) as { extractor: string; chapters: { title: string }[] };
    assert.equal(info.extractor, 'fixturechapters');
    assert.deepEqual(info.chapters.map((c) => c.title), ['one', 'two']);
    assert.equal(JSON.parse(fresh.stdout).extractor, 'fixturechapters');
    // and a run without them does not see the plugin another run loaded
    const plain = await runYtdlp(binary, { warm: true, ...invocation('', ['--dump-single-json', '--', `${base}/chaptered/watch/abc`]) });
    assert.notEqual(plain.code === 0 ? JSON.parse(plain.stdout).extractor : 'none', 'fixturechapters');
  });

  it('a cancel ends the forked run: the run settles and no process of it is left', async () => {
    const url = `${base}/slow/${Date.now()}.mp4`;
    const abort = new AbortController();
    const before = ytdlpRunCounts().forked;
    const done = runYtdlp(binary, { warm: true, ...invocation('', ['-o', path.join(dir, 'slow.%(ext)s'), '--', url]), signal: abort.signal });
    await waitFor('the slow download to start', async () => (slowRequests.length > 0 ? true : undefined), 60_000, 100);
    const [warmPid] = processesWith('warm_runner.py').filter((pid) => parentOf(pid) === String(process.pid));
    assert.ok(warmPid, 'the warm process is a child of this one');
    const childrenOf = (pid: string) => {
      try {
        return execFileSync('pgrep', ['-P', pid]).toString().trim().split('\n').filter(Boolean);
      } catch {
        return [];
      }
    };
    assert.equal(childrenOf(warmPid).length, 1, 'the run is a process of its own, forked from the warm one');
    abort.abort();
    const res = await done;
    assert.notEqual(res.code, 0);
    assert.equal(ytdlpRunCounts().forked, before + 1);
    await waitFor('no process of the cancelled run', async () => (childrenOf(warmPid).length === 0 ? true : undefined), 10_000, 100);
  });

  it('runs cancelled the moment they start end alone: the warm process takes the next runs, and a run beside them goes on', async () => {
    const url = `${base}/slow/beside-${Date.now()}.mp4`;
    const abort = new AbortController();
    const served = slowRequests.length;
    const beside = runYtdlp(binary, { warm: true, ...invocation('', ['-o', path.join(dir, 'beside.%(ext)s'), '--', url]), signal: abort.signal });
    await waitFor('the run beside to start', async () => (slowRequests.length > served ? true : undefined), 60_000, 100);
    const before = ytdlpRunCounts();
    // each is signalled as soon as its pid arrives, while the child may still be leaving the warm process's
    // code; each would stall on its source for good, so only the cancel ends it
    const runs = Array.from({ length: 12 }, (_, i) => runYtdlp(binary, { warm: true, ...invocation('', ['-o', path.join(dir, `at-once-${i}.%(ext)s`), '--', `${base}/slow/at-once-${i}-${Date.now()}.mp4`]), signal: AbortSignal.abort() }));
    const cancelled = await Promise.all(runs.map((r) => Promise.race([r, sleep(30_000).then(() => null)])));
    assert.equal(cancelled.filter((res) => res === null).length, 0, 'every cancelled run ended');
    assert.deepEqual(ytdlpRunCounts(), { forked: before.forked + 12, fresh: before.fresh }, 'every run was forked');
    for (const res of cancelled) assert.notEqual(res!.code, 0, `a cancelled run: ${res!.code} ${res!.stderr}`);
    assert.equal(processesWith('beside-').length, 1, 'the run beside goes on');
    const next = await runYtdlp(binary, { warm: true, ...invocation('', ['--version']) });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(ytdlpRunCounts().forked, before.forked + 13, 'the next run is forked too');
    abort.abort();
    assert.notEqual((await beside).code, 0);
  });

  it('a warm process that dies: its run in flight can still be cancelled, and the next run starts fresh and still succeeds', async () => {
    // this process's own: other test files running beside this one have theirs
    const warmProcesses = processesWith('warm_runner.py').filter((pid) => parentOf(pid) === String(process.pid));
    assert.equal(warmProcesses.length, 1, 'one warm process runs');
    const url = `${base}/slow/orphan-${Date.now()}.mp4`;
    const abort = new AbortController();
    const served = slowRequests.length;
    const inFlight = runYtdlp(binary, { warm: true, ...invocation('', ['-o', path.join(dir, 'orphan.%(ext)s'), '--', url]), signal: abort.signal });
    await waitFor('the run in flight to start', async () => (slowRequests.length > served ? true : undefined), 60_000, 100);
    for (const pid of warmProcesses) process.kill(Number(pid), 'SIGKILL');
    await sleep(500);
    const orphan = processesWith(`orphan-`);
    assert.equal(orphan.length, 1, 'the run outlives its warm process');
    abort.abort();
    const cancelled = await inFlight;
    assert.notEqual(cancelled.code, 0);
    await waitFor('no process of the cancelled run', async () => (processesWith('orphan-').length === 0 ? true : undefined), 10_000, 100);
    const before = ytdlpRunCounts();
    const res = await runYtdlp(binary, { warm: true, ...invocation('', ['--dump-single-json', '--', `${base}/clip.mp4`]) });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(JSON.parse(res.stdout).id, 'clip', res.stdout.slice(0, 500));
    assert.deepEqual(ytdlpRunCounts(), { forked: before.forked, fresh: before.fresh + 1 });
  });

  it('only a Python yt-dlp is warmed: a stand-in program or a missing one runs as it is', async () => {
    const standIn = path.join(dir, 'yt-dlp-stand-in');
    fs.writeFileSync(standIn, '#!/bin/sh\necho "stand-in $*"\nexit 3\n', { mode: 0o755 });
    assert.equal(launchOf(standIn), null);
    assert.equal(launchOf(path.join(dir, 'absent')), null);
    const before = ytdlpRunCounts();
    const res = await runYtdlp(standIn, { args: ['--version'], env: process.env, warm: true });
    assert.deepEqual({ code: res.code, stdout: res.stdout }, { code: 3, stdout: 'stand-in --version\n' });
    assert.equal(ytdlpRunCounts().fresh, before.fresh + 1);
    // the two Python launchers it does warm: pip's and the one `tools yt-dlp update` writes
    assert.ok(launchOf(binary), `${binary} is a pip launcher`);
    const wrapper = path.join(dir, 'yt-dlp-wrapper');
    fs.writeFileSync(wrapper, `#!/bin/sh\n# yt-dlp 2026.1.1, installed by mediasvc tools yt-dlp update\nPYTHONPATH="/data/tools/yt-dlp/2026.1.1/lib\${PYTHONPATH:+:$PYTHONPATH}" exec "/usr/bin/python3" -m yt_dlp "$@"\n`);
    assert.deepEqual(launchOf(wrapper), { python: '/usr/bin/python3', libDir: '/data/tools/yt-dlp/2026.1.1/lib' });
  });
  it('another yt-dlp for the same settings (an update) retires the warm process: its run in flight ends on it, then it exits', async () => {
    const python = launchOf(binary)!.python;
    /** A launcher as `tools yt-dlp update` writes it, each with a folder of its own (empty: the venv's yt-dlp is found after it). */
    const wrapper = (name: string) => {
      const lib = path.join(dir, `${name}-lib`);
      fs.mkdirSync(lib, { recursive: true });
      const file = path.join(dir, name);
      fs.writeFileSync(file, `#!/bin/sh\n# yt-dlp ${name}, installed by mediasvc tools yt-dlp update\nPYTHONPATH="${lib}\${PYTHONPATH:+:$PYTHONPATH}" exec "${python}" -m yt_dlp "$@"\n`, { mode: 0o755 });
      return file;
    };
    const [older, newer] = [wrapper('older'), wrapper('newer')];
    const ours = () => processesWith('warm_runner.py').filter((pid) => parentOf(pid) === String(process.pid));
    const before = new Set(ours());
    await untilForked(older, "the older yt-dlp's warm process");
    const olderPid = ours().find((pid) => !before.has(pid));
    assert.ok(olderPid, 'a warm process of its own');
    const served = slowRequests.length;
    const inFlight = runYtdlp(older, { warm: true, ...invocation('', ['--print', 'after_move:filepath', '--no-simulate', '-o', path.join(dir, 'retire.%(ext)s'), '--', `${base}/slow/retire.mp4`]) });
    await waitFor('the run in flight to start', async () => (slowRequests.length > served ? true : undefined), 60_000, 100);
    // the newer one's first run starts its own warm process, and retires the older one
    assert.equal((await runYtdlp(newer, { warm: true, ...invocation('', ['--version']) })).code, 0);
    await sleep(1000);
    assert.ok(fs.existsSync(`/proc/${olderPid}`), 'the older warm process waits for its run in flight');
    // the rest of the file, to this request and to those after it (yt-dlp reads a direct link's start before it downloads it)
    const release = setInterval(() => {
      for (const r of slowRequests.slice(served)) if (!r.writableEnded) r.end(media.subarray(4096));
    }, 100);
    const res = await inFlight.finally(() => clearInterval(release));
    assert.equal(res.code, 0, res.stderr);
    assert.ok(fs.readFileSync(res.stdout.trim()).equals(media), 'the run in flight completed on the older yt-dlp');
    await waitFor('the older warm process to exit', async () => (fs.existsSync(`/proc/${olderPid}`) ? undefined : true), 15_000, 100);
    await untilForked(newer, "runs forked from the newer yt-dlp's warm process");
  });
});
