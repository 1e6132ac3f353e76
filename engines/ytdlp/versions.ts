// yt-dlp updated without a release (`mediasvc tools yt-dlp update|rollback|status`): each version is
// installed from PyPI into a folder of its own under YTDLP_TOOLS_DIR, checked on built-in fixtures
// (a direct file, a page naming its video in og:video, an HLS stream, all on loopback), then made
// current by replacing state.json in one rename. Every yt-dlp run resolves the current version when
// it starts, so the next step uses the new one and running steps finish on theirs (old folders are
// kept: the previous one for rollback).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../../lib/config';
import { runProcess } from '../child-process';
import { currentYtdlp, readState, VERSION, wrapperOf, writeState } from './current-version';
import { ytdlpInvocation, type YtDlpEngineOptions } from './ytdlp.engine';

const execFileP = promisify(execFile);

/** Versions kept besides the current one (the running steps of the last switch may still use them). */
const KEPT = 3;

export class YtdlpUpdateError extends Error {}

type ToolsConfig = Pick<Config, 'ytdlpPath' | 'ytdlpToolsDir' | 'ffmpegPath' | 'ffprobePath' | 'maxSourcePixels'>;

/** The Python that runs managed versions: YTDLP_PATH's own (its virtualenv has yt-dlp's optional packages). */
function pythonOf(c: Pick<Config, 'ytdlpPath'>): string {
  const py = path.join(path.dirname(c.ytdlpPath), 'python');
  return fs.existsSync(py) ? py : 'python3';
}

/** Installs yt-dlp `version` (or PyPI's newest) into its own folder; returns the version installed. */
async function install(c: ToolsConfig, wanted: string | undefined, say: (line: string) => void): Promise<string> {
  if (wanted !== undefined && !VERSION.test(wanted)) throw new YtdlpUpdateError(`--version takes a yt-dlp release such as 2026.10.26, not "${wanted}"`);
  fs.mkdirSync(c.ytdlpToolsDir, { recursive: true });
  const staging = fs.mkdtempSync(path.join(c.ytdlpToolsDir, '.install-'));
  try {
    const lib = path.join(staging, 'lib');
    say(`installing yt-dlp ${wanted ?? '(newest)'} from PyPI`);
    try {
      // yt-dlp needs no package of its own; its optional ones come from YTDLP_PATH's virtualenv
      await execFileP(pythonOf(c), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', lib, `yt-dlp${wanted ? `==${wanted}` : ''}`], { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new YtdlpUpdateError(`pip could not install yt-dlp ${wanted ?? ''}: ${(e.stderr || e.message).trim().split('\n').pop()}`);
    }
    const version = /__version__\s*=\s*'([^']+)'/.exec(fs.readFileSync(path.join(lib, 'yt_dlp', 'version.py'), 'utf8'))?.[1];
    if (!version || !VERSION.test(version)) throw new YtdlpUpdateError('the installed package names no yt-dlp version');
    const wrapper = path.join(staging, 'yt-dlp');
    fs.writeFileSync(wrapper, `#!/bin/sh\n# yt-dlp ${version}, installed by mediasvc tools yt-dlp update\nPYTHONPATH="${lib.replace(staging, path.join(c.ytdlpToolsDir, version))}\${PYTHONPATH:+:\$PYTHONPATH}" exec "${pythonOf(c)}" -m yt_dlp "$@"\n`, { mode: 0o755 });
    const target = path.join(c.ytdlpToolsDir, version);
    fs.rmSync(target, { recursive: true, force: true });
    fs.renameSync(staging, target);
    return version;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Writes the self-check's media: a 2 s clip, the same as HLS, and a page naming the clip in og:video. */
async function buildFixtures(c: ToolsConfig, dir: string): Promise<void> {
  const clip = path.join(dir, 'clip.mp4');
  const src = ['-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25:duration=2', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2'];
  await execFileP(c.ffmpegPath, ['-v', 'error', '-y', ...src, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', clip], { timeout: 60_000 });
  fs.mkdirSync(path.join(dir, 'hls'));
  await execFileP(c.ffmpegPath, ['-v', 'error', '-y', '-i', clip, '-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_playlist_type', 'vod', path.join(dir, 'hls', 'index.m3u8')], { timeout: 60_000 });
  fs.writeFileSync(path.join(dir, 'page.html'), '<!DOCTYPE html><html><head><title>mediasvc self-check</title><meta property="og:video" content="/clip.mp4"><meta property="og:video:type" content="video/mp4"></head><body></body></html>');
}

const TYPES: Record<string, string> = { '.mp4': 'video/mp4', '.m3u8': 'application/vnd.apple.mpegurl', '.ts': 'video/mp2t', '.html': 'text/html; charset=utf-8' };

/**
 * Runs `binary` as the workers run yt-dlp (same options, plugins aside) on the built-in fixtures:
 * reads the direct file and the og:video page, and downloads the HLS stream. Throws what failed.
 */
export async function selfCheck(c: ToolsConfig, binary: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-ytdlp-check-'));
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!)).replace(/^(\.\.[/\\])+/, ''));
    if (!file.startsWith(dir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'content-length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  try {
    await buildFixtures(c, dir);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const opts: Pick<YtDlpEngineOptions, 'binary' | 'ffmpegPath' | 'ffprobePath' | 'maxSourcePixels'> = { binary, ffmpegPath: c.ffmpegPath, ffprobePath: c.ffprobePath, maxSourcePixels: c.maxSourcePixels };
    const invocation = ytdlpInvocation(opts);
    const run = async (what: string, own: string[]) => {
      // no egress proxy here: the fixtures are this process's own, on loopback
      const res = await runProcess(binary, { ...invocation('', own), signal: AbortSignal.timeout(120_000) });
      if (res.code !== 0) throw new YtdlpUpdateError(`the self-check failed on ${what}: ${(res.stderr.trim().split('\n').pop() ?? '').slice(0, 300)}`);
      return res.stdout;
    };
    for (const [what, url] of [['a direct file', `${base}/clip.mp4`], ['a page with og:video', `${base}/page.html`]] as const) {
      const info = JSON.parse(await run(what, ['--dump-single-json', '--', url])) as { url?: string; formats?: { url?: string }[]; _type?: string };
      const urls = [info.url, ...(info.formats ?? []).map((f) => f.url)];
      if (!urls.some((u) => u?.endsWith('/clip.mp4'))) throw new YtdlpUpdateError(`the self-check failed on ${what}: yt-dlp did not find the clip`);
    }
    const out = path.join(dir, 'out');
    const printed = (await run('an HLS stream', ['--print', 'after_move:filepath', '--no-simulate', '-o', path.join(out, 'hls.%(ext)s', ), '--', `${base}/hls/index.m3u8`])).trim().split('\n').pop() ?? '';
    if (!printed || !fs.existsSync(printed) || fs.statSync(printed).size < 10_000) throw new YtdlpUpdateError('the self-check failed on an HLS stream: no file came of it');
  } finally {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface UpdateOutcome {
  from: string;
  to: string;
  /** Set when the new version failed its self-check: the version kept (the one in use before). */
  rolledBack?: { kept: string; reason: string };
}

/** Installs, checks and switches to yt-dlp `version` (or the newest); a version that fails its self-check is never used. */
export async function updateYtdlp(c: ToolsConfig, version: string | undefined, say: (line: string) => void = () => undefined): Promise<UpdateOutcome> {
  const before = currentYtdlp(c);
  const installed = await install(c, version, say);
  say(`checking yt-dlp ${installed} on the built-in fixtures`);
  try {
    await selfCheck(c, wrapperOf(c, installed));
  } catch (err) {
    if (installed !== before.version) fs.rmSync(path.join(c.ytdlpToolsDir, installed), { recursive: true, force: true });
    return { from: before.version, to: installed, rolledBack: { kept: before.version, reason: (err as Error).message } };
  }
  if (installed !== before.version) {
    const s = readState(c);
    const previous = [before.version, ...s.previous.filter((v) => v !== before.version && v !== installed)].slice(0, KEPT);
    writeState(c, { current: installed, previous, updated_at: new Date().toISOString() });
    prune(c, [installed, ...previous]);
  }
  return { from: before.version, to: installed };
}

/** Goes back to the version in use before the last switch (YTDLP_PATH's own when that was it). */
export function rollbackYtdlp(c: Pick<Config, 'ytdlpPath' | 'ytdlpToolsDir'>): { from: string; to: string } {
  const s = readState(c);
  const before = currentYtdlp(c);
  const [back, ...rest] = s.previous;
  if (!back) throw new YtdlpUpdateError('there is no earlier version to go back to');
  const managed = fs.existsSync(wrapperOf(c, back));
  writeState(c, { current: managed ? back : null, previous: [before.version, ...rest.filter((v) => v !== before.version)].slice(0, KEPT), updated_at: new Date().toISOString() });
  return { from: before.version, to: back };
}

/** Removes version folders no longer named (neither current nor kept). */
function prune(c: Pick<Config, 'ytdlpToolsDir'>, keep: string[]): void {
  for (const name of fs.readdirSync(c.ytdlpToolsDir)) {
    if (VERSION.test(name) && !keep.includes(name)) fs.rmSync(path.join(c.ytdlpToolsDir, name), { recursive: true, force: true });
  }
}
