// yt-dlp updated without a release (`mediasvc tools yt-dlp update|rollback|status`): each version is
// installed from PyPI into a folder of its own under YTDLP_TOOLS_DIR, checked on built-in fixtures
// (a direct file, a page naming its video in og:video, an HLS stream, all on loopback), then made
// current by replacing state.json in one rename. Every yt-dlp run resolves the current version when
// it starts, so the next step uses the new one and running steps finish on theirs (old folders are
// kept: the previous one for rollback). yt-dlp-ejs, the challenge solver scripts yt-dlp runs in its
// JS runtime, goes into the same folder at the version that yt-dlp release pins: yt-dlp ignores
// an EJS of another minor version (or other scripts), and the self-check fails then.
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

type ToolsConfig = Pick<Config, 'ytdlpPath' | 'ytdlpToolsDir' | 'ffmpegPath' | 'ffprobePath' | 'maxSourcePixels' | 'denoPath'>;

/** The Python that runs managed versions: YTDLP_PATH's own (its virtualenv has yt-dlp's optional packages). */
function pythonOf(c: Pick<Config, 'ytdlpPath'>): string {
  const py = path.join(path.dirname(c.ytdlpPath), 'python');
  return fs.existsSync(py) ? py : 'python3';
}

/** pip installs `spec` alone (no dependencies) into `lib`; a failure is a YtdlpUpdateError naming `what`. */
async function pipInstall(c: Pick<Config, 'ytdlpPath'>, lib: string, spec: string, what: string): Promise<void> {
  try {
    await execFileP(pythonOf(c), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', lib, spec], { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new YtdlpUpdateError(`pip could not install ${what}: ${(e.stderr || e.message).trim().split('\n').pop()}`);
  }
}

/**
 * The yt-dlp-ejs version an installed yt-dlp pins: its wheel's `Requires-Dist: yt-dlp-ejs==X; extra ==
 * 'default'`, else the version its EJS provider checks (jsc/_builtin/vendor/_info.py); null for a
 * release from before EJS.
 */
export function ejsPinOf(lib: string): string | null {
  const dist = fs.readdirSync(lib).find((d) => /^yt_dlp-.*\.dist-info$/.test(d));
  const metadata = dist ? fs.readFileSync(path.join(lib, dist, 'METADATA'), 'utf8') : '';
  const pinned = /^Requires-Dist: yt-dlp-ejs==([^\s;]+)\s*;\s*extra == .default./m.exec(metadata)?.[1];
  if (pinned) return pinned;
  const info = path.join(lib, 'yt_dlp', 'extractor', 'youtube', 'jsc', '_builtin', 'vendor', '_info.py');
  return fs.existsSync(info) ? (/^VERSION = '([^']+)'/m.exec(fs.readFileSync(info, 'utf8'))?.[1] ?? null) : null;
}

/** Installs yt-dlp `version` (or PyPI's newest) into its own folder, with the yt-dlp-ejs it pins; returns the version installed. */
async function install(c: ToolsConfig, wanted: string | undefined, say: (line: string) => void): Promise<string> {
  if (wanted !== undefined && !VERSION.test(wanted)) throw new YtdlpUpdateError(`--version takes a yt-dlp release such as 2026.10.26, not "${wanted}"`);
  fs.mkdirSync(c.ytdlpToolsDir, { recursive: true });
  const staging = fs.mkdtempSync(path.join(c.ytdlpToolsDir, '.install-'));
  try {
    const lib = path.join(staging, 'lib');
    say(`installing yt-dlp ${wanted ?? '(newest)'} from PyPI`);
    // yt-dlp needs no package of its own; its optional ones come from YTDLP_PATH's virtualenv, but for EJS
    await pipInstall(c, lib, `yt-dlp${wanted ? `==${wanted}` : ''}`, `yt-dlp ${wanted ?? ''}`.trim());
    const version = /__version__\s*=\s*'([^']+)'/.exec(fs.readFileSync(path.join(lib, 'yt_dlp', 'version.py'), 'utf8'))?.[1];
    if (!version || !VERSION.test(version)) throw new YtdlpUpdateError('the installed package names no yt-dlp version');
    const ejs = ejsPinOf(lib);
    if (ejs) {
      say(`installing yt-dlp-ejs ${ejs} (the version yt-dlp ${version} pins) from PyPI`);
      await pipInstall(c, lib, `yt-dlp-ejs==${ejs}`, `yt-dlp-ejs ${ejs}`);
    }
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

/**
 * What yt-dlp's EJS provider checks before it uses the yt-dlp-ejs package (jsc/_builtin/ejs.py): the
 * same major.minor as the scripts it expects (vendor.VERSION), and the expected hashes of the
 * minified scripts; otherwise it ignores the package. Run in the Python and path `binary` runs in.
 */
const EJS_CHECK = `
import hashlib, json
out = {'expects': None, 'has': None, 'usable': None}
try:
    from yt_dlp.extractor.youtube.jsc._builtin import vendor
    out['expects'] = vendor.VERSION
except Exception:
    vendor = None
try:
    import yt_dlp_ejs
    import yt_dlp_ejs.yt.solver as solver
    out['has'] = yt_dlp_ejs.version
except Exception:
    yt_dlp_ejs = None
if vendor is not None and yt_dlp_ejs is not None:
    try:
        from yt_dlp.utils import version_tuple
        digest = lambda code: hashlib.sha3_512(code.encode()).hexdigest()
        same = version_tuple(out['has'], lenient=True)[:2] == version_tuple(out['expects'], lenient=True)[:2]
        hashes = [(solver.core, 'yt.solver.core.min.js'), (solver.lib, 'yt.solver.lib.min.js')]
        out['usable'] = same and all(vendor.HASHES.get(name) in (None, digest(read())) for read, name in hashes)
    except Exception:
        out['usable'] = False
print(json.dumps(out))
`;

export interface EjsStatus {
  /** The scripts' version yt-dlp expects (null: a yt-dlp without EJS). */
  expects: string | null;
  /** The yt-dlp-ejs it would load (null: none). */
  has: string | null;
  /** Whether yt-dlp would use it; null when there is nothing to compare. */
  usable: boolean | null;
}

/** yt-dlp-ejs as `binary` (a managed version's wrapper, or YTDLP_PATH's) would find and judge it. */
export async function ejsStatus(c: Pick<Config, 'ytdlpPath' | 'ytdlpToolsDir'>, binary: string): Promise<EjsStatus> {
  // a managed version's own folder comes first on its path, as its wrapper puts it
  const lib = path.join(path.dirname(binary), 'lib');
  const managed = path.dirname(path.dirname(binary)) === c.ytdlpToolsDir && fs.existsSync(lib);
  const env = { ...process.env, PYTHONPATH: [managed ? lib : null, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter) };
  try {
    const { stdout } = await execFileP(pythonOf(c), ['-c', EJS_CHECK], { env, timeout: 60_000 });
    return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as EjsStatus;
  } catch {
    return { expects: null, has: null, usable: null };
  }
}

/** Throws when yt-dlp would ignore the EJS it has (or has none), so its JS challenges could not be solved. */
async function checkEjs(c: ToolsConfig, binary: string): Promise<void> {
  const ejs = await ejsStatus(c, binary);
  if (ejs.expects === null) return;
  if (ejs.has === null) throw new YtdlpUpdateError(`the self-check failed on its challenge solver: yt-dlp expects yt-dlp-ejs ${ejs.expects} and finds none`);
  if (!ejs.usable) throw new YtdlpUpdateError(`the self-check failed on its challenge solver: yt-dlp expects yt-dlp-ejs ${ejs.expects} and would ignore the ${ejs.has} it has`);
}

const TYPES: Record<string, string> = { '.mp4': 'video/mp4', '.m3u8': 'application/vnd.apple.mpegurl', '.ts': 'video/mp2t', '.html': 'text/html; charset=utf-8' };

/**
 * Runs `binary` as the workers run yt-dlp (same options, plugins aside) on the built-in fixtures:
 * reads the direct file and the og:video page, and downloads the HLS stream; first, checks that it
 * would use the yt-dlp-ejs it finds. Throws what failed.
 */
export async function selfCheck(c: ToolsConfig, binary: string): Promise<void> {
  await checkEjs(c, binary);
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
    const opts: Pick<YtDlpEngineOptions, 'binary' | 'ffmpegPath' | 'ffprobePath' | 'maxSourcePixels' | 'denoPath'> = { binary, ffmpegPath: c.ffmpegPath, ffprobePath: c.ffprobePath, maxSourcePixels: c.maxSourcePixels, denoPath: c.denoPath };
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
