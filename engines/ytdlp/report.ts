// yt-dlp's own report of what it would solve YouTube's JS challenges with and which PO token
// providers it has: the [debug] lines `--verbose` prints once its YouTube extractor has started, for
// the service's own command line (the same JS runtimes, plugins and youtube.com extractor arguments).
// The run goes to a made-up video through a proxy on loopback that closes every connection, so
// nothing leaves the machine; its extraction then fails, after the report. `tools yt-dlp status`
// prints it; /readyz shows a cached copy (computed at start and again when the version in use changes).
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../lib/config';
import { runProcess } from '../child-process';
import { currentYtdlp } from './current-version';
import { jsRuntimes, ytdlpInvocation, type YtDlpEngineOptions } from './ytdlp.engine';

/** A made-up YouTube video: the extractor starts (and reports), then its first request fails on loopback. */
const REPORT_URL = 'https://www.youtube.com/watch?v=mediasvc000';

export interface JsRuntimeEntry {
  name: string;
  version: string | null;
  /** False where yt-dlp marks it "(unsupported)" (too old) or "(unknown)". */
  supported: boolean;
}

export interface ProviderEntry {
  /** With its version for a plugin's, as yt-dlp names it: `deno`, `bgutil:http-2.0.2`. */
  name: string;
  available: boolean;
  /** A plugin's, not one built into yt-dlp. */
  external: boolean;
}

export interface YtdlpReport {
  /** yt-dlp's own lines, as it printed them (null: it printed none). */
  lines: { version: string | null; jsRuntimes: string | null; jsChallengeProviders: string | null; poTokenProviders: string | null; optionalLibraries: string | null; pluginDirectories: string | null };
  runtimes: JsRuntimeEntry[];
  challengeProviders: ProviderEntry[];
  poTokenProviders: ProviderEntry[];
  /** The runtime yt-dlp solves challenges with (the first enabled one it supports and has a provider for), else the first it found; null: none. */
  runtime: JsRuntimeEntry | null;
  /** True when some JS challenge provider is available: YouTube's challenges can be solved. */
  solves: boolean;
  /** yt-dlp-ejs's version as yt-dlp loaded it (its optional libraries), if it did. */
  ejs: string | null;
  /** Why there is no report (yt-dlp did not start, or printed none of it). */
  error?: string;
  checkedAt: string;
}

/** The text after `marker` on the first stderr line that has it. */
function after(stderr: string, marker: string): string | null {
  const line = stderr.split('\n').find((l) => l.startsWith('[debug]') && l.includes(marker));
  return line ? line.slice(line.indexOf(marker) + marker.length).trim() : null;
}

/** The whole [debug] line that has `marker`, as yt-dlp printed it. */
function lineWith(stderr: string, marker: string): string | null {
  return stderr.split('\n').find((l) => l.startsWith('[debug]') && l.includes(marker))?.trim() ?? null;
}

/** `deno-2.9.8, node-20.20.2 (unsupported), bun (unknown)` (YoutubeDL.print_debug_header). */
export function parseJsRuntimes(list: string | null): JsRuntimeEntry[] {
  if (!list || /^none\b/.test(list)) return [];
  return list.split(', ').map((item) => {
    const unknown = /^(.+) \(unknown\)$/.exec(item);
    if (unknown) return { name: unknown[1]!, version: null, supported: false };
    const m = /^(.+)-([^-\s]+)( \(unsupported\))?$/.exec(item);
    return m ? { name: m[1]!, version: m[2]!, supported: !m[3] } : { name: item, version: null, supported: false };
  });
}

/** `bun (unavailable), deno, bgutil:http-2.0.2 (external)` (pot/_director.provider_display_list). */
export function parseProviders(list: string | null): ProviderEntry[] {
  if (!list || list === 'none') return [];
  const out: ProviderEntry[] = [];
  for (const m of list.matchAll(/([^,(]+?)(?: \(([^)]*)\))?(?:, |$)/g)) {
    if (!m[1]) continue;
    const statuses = (m[2] ?? '').split(',').map((s) => s.trim());
    out.push({ name: m[1].trim(), available: !statuses.includes('unavailable'), external: statuses.includes('external') });
  }
  return out;
}

/** The report in yt-dlp's stderr; `enabled`: the runtimes the run enabled, best first. */
export function parseReport(stderr: string, enabled: string[]): Omit<YtdlpReport, 'checkedAt'> {
  const lines = {
    version: lineWith(stderr, 'yt-dlp version'),
    jsRuntimes: lineWith(stderr, 'JS runtimes:'),
    jsChallengeProviders: lineWith(stderr, 'JS Challenge Providers:'),
    poTokenProviders: lineWith(stderr, 'PO Token Providers:'),
    optionalLibraries: lineWith(stderr, 'Optional libraries:'),
    pluginDirectories: lineWith(stderr, 'Plugin directories:'),
  };
  const runtimes = parseJsRuntimes(after(stderr, 'JS runtimes:'));
  const challengeProviders = parseProviders(after(stderr, 'JS Challenge Providers:'));
  const poTokenProviders = parseProviders(after(stderr, 'PO Token Providers:'));
  const usable = (r: JsRuntimeEntry) => r.supported && challengeProviders.some((p) => p.available && p.name === r.name);
  const ordered = enabled.map((name) => runtimes.find((r) => r.name === name)).filter((r): r is JsRuntimeEntry => r !== undefined);
  const runtime = ordered.find(usable) ?? runtimes.find(usable) ?? ordered[0] ?? runtimes[0] ?? null;
  const ejs = /\byt_dlp_ejs-(\S+?)(,|$)/.exec(after(stderr, 'Optional libraries:') ?? '')?.[1] ?? null;
  const out = { lines, runtimes, challengeProviders, poTokenProviders, runtime, solves: challengeProviders.some((p) => p.available), ejs };
  if (!lines.jsChallengeProviders) {
    const last = stderr.trim().split('\n').filter((l) => !l.startsWith('[debug]')).pop();
    return { ...out, error: `yt-dlp printed no JS challenge report${last ? `: ${last.slice(0, 300)}` : ''}` };
  }
  return out;
}

/** A proxy on loopback that closes every connection: the report's run reaches nothing. */
async function deadEndProxy(): Promise<{ url: string; close: () => void }> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

export type ReportOptions = Pick<YtDlpEngineOptions, 'binary' | 'ffmpegPath' | 'ffprobePath' | 'pluginDirs' | 'maxSourcePixels' | 'denoPath' | 'extractorArgs' | 'extraArgs'>;

/** Runs `binary` with the service's arguments and `--verbose`, and reads its report. */
export async function ytdlpReport(opts: ReportOptions & { binary: string }): Promise<YtdlpReport> {
  const checkedAt = new Date().toISOString();
  const enabled = jsRuntimes(opts.denoPath).map((r) => r.name);
  const proxy = await deadEndProxy();
  try {
    const own = ['--verbose', '--simulate', '--retries', '0', '--extractor-retries', '0', '--socket-timeout', '5', '--', REPORT_URL];
    const res = await runProcess(opts.binary, { ...ytdlpInvocation(opts)(proxy.url, own, REPORT_URL), signal: AbortSignal.timeout(60_000) });
    return { ...parseReport(res.stderr, enabled), checkedAt };
  } catch (err) {
    return { lines: { version: null, jsRuntimes: null, jsChallengeProviders: null, poTokenProviders: null, optionalLibraries: null, pluginDirectories: null }, runtimes: [], challengeProviders: [], poTokenProviders: [], runtime: null, solves: false, ejs: null, error: `yt-dlp did not run: ${(err as Error).message}`, checkedAt };
  } finally {
    proxy.close();
  }
}

type ReportConfig = Pick<Config, 'ytdlpPath' | 'ytdlpToolsDir' | 'ffmpegPath' | 'ffprobePath' | 'ytdlpPluginDirs' | 'maxSourcePixels' | 'denoPath' | 'ytdlpExtractorArgs'>;

/** The report of the yt-dlp new steps use, run now. */
export function currentYtdlpReport(config: ReportConfig): Promise<YtdlpReport> {
  return ytdlpReport({ binary: currentYtdlp(config).binary, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, pluginDirs: config.ytdlpPluginDirs, maxSourcePixels: config.maxSourcePixels, denoPath: config.denoPath, extractorArgs: config.ytdlpExtractorArgs });
}

const cached = new Map<string, { key: string; report: YtdlpReport | null; running: Promise<void> | null }>();

/**
 * This process's copy of the report for the yt-dlp in use: null until the first run is in. A run
 * starts on the first call and again only when the version in use changes (an update, a
 * rollback); a call never waits for one.
 */
export function cachedYtdlpReport(config: ReportConfig): YtdlpReport | null {
  const now = currentYtdlp(config);
  const key = `${now.binary}\n${now.version}`;
  const slot = cached.get(config.ytdlpToolsDir) ?? { key: '', report: null, running: null };
  cached.set(config.ytdlpToolsDir, slot);
  if (slot.key !== key && !slot.running) {
    const running = currentYtdlpReport(config).then((report) => {
      slot.report = report;
      slot.key = key;
      slot.running = null;
    });
    slot.running = running;
  }
  return slot.report;
}
