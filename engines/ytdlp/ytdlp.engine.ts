import fs from 'node:fs/promises';
import path from 'node:path';
import type { CollectionItem, CollectionListing } from '../collections/collection';
import { urlHost } from '../../lib/address-policy';
import { projectRoot, type Config } from '../../lib/config';
import { log } from '../../lib/logger';
import { siteOf } from '../../lib/source-sites';
import { withoutInternals } from '../../lib/user-text';
import { SANDBOX_BIN_DIR, sandboxEnv } from '../ffmpeg/input-policy';
import { currentYtdlp } from './current-version';
import { processCookieStore, type CookieStore } from './site-cookies';
import { noteYtdlpWarnings, warningCollector } from './warnings';
import { runYtdlp } from './warm-runs';

const SITE_DIR = path.join(projectRoot, 'engines', 'ytdlp', 'site');

/** The subset of yt-dlp's info dict this service reads. */
export interface YtDlpFormat {
  format_id: string;
  url?: string;
  ext?: string;
  format_note?: string;
  resolution?: string;
  width?: number | null;
  height?: number | null;
  fps?: number | null;
  filesize?: number | null;
  filesize_approx?: number | null;
  vcodec?: string | null;
  acodec?: string | null;
  video_ext?: string;
  audio_ext?: string;
  protocol?: string;
  /** Headers a client must send to fetch `url` (User-Agent, Referer, cookies…). */
  http_headers?: Record<string, string>;
}

export interface YtDlpInfo {
  id: string;
  title?: string;
  fulltitle?: string;
  description?: string | null;
  duration?: number | null;
  thumbnail?: string | null;
  thumbnails?: { url: string }[];
  upload_date?: string | null;
  timestamp?: number | null;
  release_timestamp?: number | null;
  view_count?: number | null;
  like_count?: number | null;
  channel?: string | null;
  uploader?: string | null;
  channel_url?: string | null;
  uploader_url?: string | null;
  tags?: string[] | null;
  categories?: string[] | null;
  subtitles?: Record<string, unknown> | null;
  /** `{start_time, end_time, title}` each, where the platform publishes chapters. */
  chapters?: unknown[] | null;
  formats?: YtDlpFormat[];
  is_live?: boolean | null;
  live_status?: string | null;
  filesize?: number | null;
  filesize_approx?: number | null;
  webpage_url?: string;
  extractor?: string;
  extractor_key?: string;
  /** True when the URL is the media file itself. */
  direct?: boolean;
  url?: string;
  ext?: string;
  protocol?: string;
  width?: number | null;
  height?: number | null;
  fps?: number | null;
  vcodec?: string | null;
  acodec?: string | null;
  /** With a format selection: the selected format's headers, or the formats to merge (video + audio). */
  http_headers?: Record<string, string>;
  requested_formats?: YtDlpFormat[];
  format_id?: string;
  _type?: string;
}

/** `refused`: the platform turned the service away (rate limit, sign-in or bot check), whatever the video. */
export type YtDlpErrorKind = 'unsupported' | 'unavailable' | 'filtered' | 'refused' | 'failed';

/** A yt-dlp failure, classified so callers can tell user errors from transient ones. */
export class YtDlpError extends Error {
  /** yt-dlp's own error line, for the logs. */
  raw?: string;
  constructor(
    readonly kind: YtDlpErrorKind,
    message: string,
    /** The source was past one of the request's limits: its size (max-filesize) or what the match filter checks (duration, live). */
    readonly limit?: 'size' | 'filter',
  ) {
    super(message);
    this.name = 'YtDlpError';
  }
}

export interface DownloadProgress {
  downloadedBytes: number;
  totalBytes: number | null;
  /** 0..1 when known. */
  fraction: number | null;
}

export interface DownloadRequest {
  url: string;
  outDir: string;
  /** yt-dlp -f selector. */
  format: string;
  /** yt-dlp -S sort fields. */
  sort?: string;
  mergeOutputFormat?: string;
  maxFilesize?: number;
  /** yt-dlp --match-filter; a source that does not pass is skipped (no file). */
  matchFilter?: string;
  /** Also write `source.info.json` beside the file, so one run gives both media and metadata. */
  writeInfoJson?: boolean;
  /** An info JSON file from an earlier probe: yt-dlp downloads from it without extracting the page again. */
  infoJson?: string;
  /** The platform's subtitles in these languages (ISO 639-1; regional variants too) beside the file, `source.<lang>.<vtt|srt>`, where it has them. */
  subtitleLanguages?: string[];
  /** The egress proxy URL of this run: every request yt-dlp makes goes through it. */
  proxyUrl: string;
  signal?: AbortSignal;
  onProgress?: (p: DownloadProgress) => void;
  /** What the caller knows of the run, for its log lines (yt-dlp's warnings). */
  context?: RunContext;
}

/** The job a run is for, when there is one (an info read has none). */
export interface RunContext {
  jobId?: string;
}

export interface YtDlpEngine {
  /**
   * Extracts metadata for one video (never a playlist), every request through the egress proxy. With
   * `format` (and `sort`), the result also names the selected format(s), as a download would pick them.
   */
  probe(url: string, opts: { proxyUrl: string; signal?: AbortSignal; format?: string; sort?: string; context?: RunContext }): Promise<YtDlpInfo>;
  /**
   * Lists what yt-dlp reads as a playlist (a channel, a playlist, a page with several videos) by its
   * flat listing, without fetching each video's page: at most `maxItems` entries. A single video is a
   * listing of one.
   */
  list(url: string, opts: { proxyUrl: string; maxItems: number; signal?: AbortSignal }): Promise<CollectionListing>;
  /** Downloads into outDir and returns the path of the final file. */
  download(req: DownloadRequest): Promise<string>;
  /** True when the URL's site has cookies (`mediasvc cookies set`): its media is then fetched by yt-dlp alone, which holds them. */
  hasCookiesFor(url: string): boolean;
}

export interface YtDlpEngineOptions {
  /** The program, or how to find it as each run starts (the current version after an update). */
  binary: string | (() => string);
  /** The real ffmpeg and ffprobe, which yt-dlp runs through the sandbox wrappers (input-policy). */
  ffmpegPath: string;
  ffprobePath: string;
  /** Extra yt-dlp plugin folders (`--plugin-dirs`), e.g. from YTDLP_PLUGIN_DIRS. */
  pluginDirs?: string[];
  extraArgs?: string[];
  /** Deno, yt-dlp's JS runtime for YouTube's challenges (default: the project's .venv/bin/deno). */
  denoPath?: string;
  /** `--extractor-args` by site key (YTDLP_EXTRACTOR_ARGS__<site>), given only to runs on that site's URLs. */
  extractorArgs?: Record<string, string[]>;
  /** The decoders' pixel budget for the ffmpeg and ffprobe runs yt-dlp makes (input-policy's default when unset). */
  maxSourcePixels?: number;
  /** Cookies per site, handed to a run only for its own site's URL. */
  cookies?: CookieStore;
  /** True: runs are forked from a warm yt-dlp (YTDLP_WARM, on by default); otherwise each starts fresh. */
  warm?: boolean;
}

const PROGRESS_PREFIX = 'MEDIASVC-PROGRESS ';

export const DEFAULT_DENO_PATH = path.join(projectRoot, '.venv', 'bin', 'deno');
/** The oldest Node yt-dlp runs JS challenges in (yt_dlp/utils/_jsruntime.py); older ones it ignores. */
const NODE_FOR_YTDLP = 22;

/**
 * The JS runtimes yt-dlp may solve YouTube's challenges with, best first: Deno (PyPI's, in the
 * virtualenv), then this Node only where yt-dlp supports it; nothing it finds on PATH.
 */
export function jsRuntimes(denoPath: string = DEFAULT_DENO_PATH, node: { version: string; path: string } = { version: process.versions.node, path: process.execPath }): { name: string; path: string }[] {
  const nodeOk = Number(node.version.split('.')[0]) >= NODE_FOR_YTDLP;
  return [{ name: 'deno', path: denoPath }, ...(nodeOk ? [{ name: 'node', path: node.path }] : [])];
}

/** yt-dlp's options for jsRuntimes: its default (a deno on PATH) cleared first. */
export function jsRuntimeArgs(...args: Parameters<typeof jsRuntimes>): string[] {
  return ['--no-js-runtimes', ...jsRuntimes(...args).flatMap((r) => ['--js-runtimes', `${r.name}:${r.path}`])];
}

/** The site's own `--extractor-args` for a URL (its longest configured suffix), or none. */
export function extractorArgsFor(url: string | undefined, bySite: Record<string, string[]> | undefined): string[] {
  if (!url || !bySite || !Object.keys(bySite).length) return [];
  let host: string;
  try {
    host = urlHost(url).host;
  } catch {
    return [];
  }
  const site = siteOf(host, new Set(Object.keys(bySite)));
  return site ? bySite[site]!.flatMap((a) => ['--extractor-args', a]) : [];
}

/**
 * How every yt-dlp run starts: no user config, one video, its warnings kept (noteYtdlpWarnings),
 * Deno as the JS runtime (YouTube needs one), HLS and DASH fetched by yt-dlp itself (so each segment
 * and key goes through the proxy), and ffmpeg only through the sandbox wrappers (local media files only).
 */
export function ytdlpInvocation(opts: Pick<YtDlpEngineOptions, 'binary' | 'ffmpegPath' | 'ffprobePath' | 'pluginDirs' | 'extraArgs' | 'maxSourcePixels' | 'denoPath' | 'extractorArgs'>) {
  const args = [
    '--ignore-config',
    '--no-playlist',
    '--no-cache-dir',
    ...jsRuntimeArgs(opts.denoPath),
    '--ffmpeg-location',
    SANDBOX_BIN_DIR,
    '--downloader',
    'm3u8:native',
    '--downloader',
    'dash:native',
    ...(opts.pluginDirs ?? []).flatMap((d) => ['--plugin-dirs', d]),
    ...(opts.extraArgs ?? []),
  ];
  // site/sitecustomize.py limits yt-dlp's own fetches to http(s) (no data: or ftp: segments)
  const pythonPath = [SITE_DIR, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
  const env = { ...process.env, ...sandboxEnv(opts.ffmpegPath, opts.ffprobePath, opts.maxSourcePixels), PYTHONPATH: pythonPath };
  /** The arguments of one run: the common ones, the site's extractor arguments (of `url`), the proxy, then the run's own. */
  return (proxyUrl: string, own: string[], url?: string) => ({ args: [...args, ...extractorArgsFor(url, opts.extractorArgs), '--proxy', proxyUrl, ...own], env });
}

/** The program to run now. */
export function ytdlpBinary(opts: Pick<YtDlpEngineOptions, 'binary'>): string {
  return typeof opts.binary === 'function' ? opts.binary() : opts.binary;
}

/** The engine's options from the service's settings. */
export function ytdlpOptionsOf(config: Pick<Config, 'ytdlpPath' | 'ytdlpToolsDir' | 'ffmpegPath' | 'ffprobePath' | 'ytdlpPluginDirs' | 'maxSourcePixels' | 'cookiesDir' | 'secrets' | 'denoPath' | 'ytdlpExtractorArgs' | 'ytdlpWarm'>): YtDlpEngineOptions {
  return {
    binary: () => currentYtdlp(config).binary,
    ffmpegPath: config.ffmpegPath,
    ffprobePath: config.ffprobePath,
    pluginDirs: config.ytdlpPluginDirs,
    maxSourcePixels: config.maxSourcePixels,
    cookies: processCookieStore(config),
    denoPath: config.denoPath,
    extractorArgs: config.ytdlpExtractorArgs,
    warm: config.ytdlpWarm,
  };
}

/** Runs the pinned yt-dlp as a child process with JSON output. */
export function createYtDlpEngine(opts: YtDlpEngineOptions): YtDlpEngine {
  const invocation = ytdlpInvocation(opts);

  /** Runs with the URL's site cookies, if it has any, in a file of this run's own. */
  async function withCookies<T>(url: string, run: (args: string[]) => Promise<T>): Promise<T> {
    const jar = opts.cookies?.fileFor(url) ?? null;
    try {
      return await run(jar ? ['--cookies', jar.path] : []);
    } finally {
      jar?.remove();
    }
  }

  return {
    hasCookiesFor: (url) => opts.cookies?.siteFor(url) != null,

    async probe(url, { proxyUrl, signal, format, sort, context }) {
      const select = [...(format ? ['-f', format] : []), ...(sort ? ['-S', sort] : [])];
      const warnings = warningCollector();
      const res = await withCookies(url, (cookies) => runYtdlp(ytdlpBinary(opts), { ...invocation(proxyUrl, [...cookies, '--dump-single-json', ...select, '--', url], url), signal, onLine: warnings.onLine, warm: opts.warm }));
      noteYtdlpWarnings(warnings.text(), url, context);
      if (res.code !== 0) throw classify(res.stderr, url);
      // which yt-dlp read it: after an update, the next read says the new version
      log.debug({ yt_dlp: /"_version":\s*\{\s*"version":\s*"([^"]+)"/.exec(res.stdout)?.[1] ?? 'unknown' }, 'yt-dlp read a source');
      return parseSingleVideoJson<YtDlpInfo>(res.stdout);
    },

    async list(url, { proxyUrl, maxItems, signal }) {
      // one more than asked, so that a longer source is told apart from one of exactly maxItems
      const own = ['--flat-playlist', '--dump-single-json', '--playlist-end', String(maxItems + 1), '--', url];
      const res = await withCookies(url, (cookies) => runYtdlp(ytdlpBinary(opts), { ...invocation(proxyUrl, [...cookies, ...own], url), signal, warm: opts.warm }));
      if (res.code !== 0) throw classify(res.stderr, url);
      return flatListing(res.stdout, url, maxItems);
    },

    download: (req) => withCookies(req.url, (cookies) => downloadWith(req, cookies)),
  };

  async function downloadWith(req: DownloadRequest, cookies: string[]): Promise<string> {
    await fs.mkdir(req.outDir, { recursive: true });
    const own = [
      ...cookies,
      '--newline',
      '--progress',
      '--progress-template',
      `download:${PROGRESS_PREFIX}%(progress.downloaded_bytes)s %(progress.total_bytes)s %(progress.total_bytes_estimate)s`,
      '--print',
      'after_move:filepath',
      '--no-simulate',
      '--no-part',
      // a platform's chapters go into the file (a remux, only when it has some), so every later step keeps them
      '--embed-chapters',
      '-o',
      path.join(req.outDir, 'source.%(ext)s'),
      '-f',
      req.format,
      ...(req.sort ? ['-S', req.sort] : []),
      ...(req.mergeOutputFormat ? ['--merge-output-format', req.mergeOutputFormat] : []),
      ...(req.maxFilesize ? ['--max-filesize', String(req.maxFilesize)] : []),
      ...(req.matchFilter ? ['--match-filter', req.matchFilter] : []),
      ...(req.writeInfoJson ? ['--write-info-json'] : []),
      ...(req.subtitleLanguages?.length ? ['--write-subs', '--sub-langs', req.subtitleLanguages.map((l) => `${l}(-.*)?`).join(','), '--sub-format', 'vtt/srt/best'] : []),
      // one file at most, even where a page is read as several copies of its video
      '--playlist-items',
      '1',
      '--abort-on-unavailable-fragments',
      // a probe's info JSON saves extracting the page a second time
      ...(req.infoJson ? ['--load-info-json', req.infoJson] : ['--', req.url]),
    ];
    const warnings = warningCollector();
    const res = await runYtdlp(ytdlpBinary(opts), {
      ...invocation(req.proxyUrl, own, req.url),
      signal: req.signal,
      warm: opts.warm,
      onLine: (line, stream) => {
        warnings.onLine(line, stream);
        if (!line.startsWith(PROGRESS_PREFIX) || !req.onProgress) return;
        const [done, total, estimate] = line.slice(PROGRESS_PREFIX.length).split(' ').map(Number);
        const t = Number.isFinite(total) && total! > 0 ? total! : Number.isFinite(estimate) && estimate! > 0 ? estimate! : null;
        const d = Number.isFinite(done) ? done! : 0;
        req.onProgress({ downloadedBytes: d, totalBytes: t, fraction: t ? Math.min(1, d / t) : null });
      },
    });
    if (req.signal?.aborted) throw new YtDlpError('failed', 'download cancelled');
    noteYtdlpWarnings(warnings.text(), req.url, req.context);
    if (res.code !== 0) throw classify(res.stderr, req.url);
    const printed = res.stdout.trim().split('\n').filter(Boolean).pop();
    if (!printed) {
      if (/File is larger than max-filesize/i.test(res.stdout + res.stderr)) {
        throw new YtDlpError('unavailable', `The source is larger than the limit of ${req.maxFilesize} bytes`, 'size');
      }
      // --print makes yt-dlp quiet, so a clean exit without a file under a match filter is the filter's skip
      if (req.matchFilter || /does not pass filter/i.test(res.stdout + res.stderr)) {
        throw new YtDlpError('filtered', 'The source is outside the limits (a live stream, or longer than the maximum duration)', 'filter');
      }
      throw new YtDlpError('failed', 'yt-dlp finished without producing a file');
    }
    await fs.access(printed);
    return printed;
  }
}

type FlatEntry = { _type?: string; id?: string; url?: string; webpage_url?: string; original_url?: string; title?: string; duration?: number; timestamp?: number; release_timestamp?: number; upload_date?: string; thumbnail?: string; thumbnails?: { url?: string }[]; entries?: FlatEntry[] };

/** yt-dlp's YYYYMMDD date, or a Unix time, as ISO 8601. */
function entryDate(e: FlatEntry): string | null {
  const t = e.timestamp ?? e.release_timestamp;
  if (typeof t === 'number' && Number.isFinite(t)) return new Date(t * 1000).toISOString();
  const d = /^(\d{4})(\d{2})(\d{2})$/.exec(e.upload_date ?? '');
  return d ? `${d[1]}-${d[2]}-${d[3]}T00:00:00.000Z` : null;
}

const httpUrl = (u: string | undefined): string | null => (u && /^https?:\/\//i.test(u) ? u : null);

/** `--flat-playlist --dump-single-json` output as a listing: entries of a playlist, or the one video. */
export function flatListing(stdout: string, sourceUrl: string, maxItems: number): CollectionListing {
  let info: FlatEntry;
  try {
    info = JSON.parse(stdout) as FlatEntry;
  } catch {
    throw new YtDlpError('failed', 'yt-dlp printed no readable listing');
  }
  const toItem = (e: FlatEntry, page: string | null): CollectionItem | null => {
    // a flat entry (a link to a video's page) is its url; a full one found in a page, its media's url, as the page's is every entry's
    const url = e._type === 'url' || e._type === 'url_transparent' ? httpUrl(e.url) : (httpUrl(e.url) ?? httpUrl(e.webpage_url) ?? page);
    if (!url) return null;
    return { url, identity: e.id ?? url, title: e.title ?? null, publishedAt: entryDate(e), duration: typeof e.duration === 'number' ? e.duration : null, thumbnail: httpUrl(e.thumbnail) ?? httpUrl(e.thumbnails?.at(-1)?.url) };
  };
  if (info._type !== 'playlist') {
    const one = toItem({ ...info, _type: 'url', url: httpUrl(info.webpage_url) ?? httpUrl(info.original_url) ?? sourceUrl }, null);
    return { title: info.title ?? null, items: one ? [one] : [], truncated: null };
  }
  const entries = (info.entries ?? []).map((e) => toItem(e, null)).filter((i): i is CollectionItem => i !== null);
  const truncated = entries.length > maxItems ? `the source lists more than ${maxItems} items; the first ${maxItems} were taken (the limit on one batch's items)` : null;
  return { title: info.title ?? null, items: entries.slice(0, maxItems), truncated };
}

type InfoLike = { _type?: string; id?: string; url?: string; title?: string; extractor_key?: string; entries?: InfoLike[] };

/**
 * A "playlist" whose entries are all the same media file is one video: pages that name their video
 * twice (og:video relative and absolute, say) make yt-dlp's generic extractor number the copies
 * "Title (1)", "Title (2)". It keeps the page's own title.
 */
function oneVideoOf<T extends InfoLike>(playlist: T): T | null {
  const entries = playlist.entries ?? [];
  const first = entries[0];
  if (!first?.url || first._type === 'url' || first._type === 'url_transparent') return null;
  const same = (u: string | undefined) => !!u && u.replace(/#.*$/, '') === first.url!.replace(/#.*$/, '');
  if (!entries.every((e) => e._type !== 'url' && same(e.url))) return null;
  const title = playlist.title ?? first.title?.replace(/ \(\d+\)$/, '');
  return { ...(first as T), ...(title ? { title, fulltitle: title } : {}) };
}

/** yt-dlp's `--dump-single-json` output for one video; a playlist of several videos or unreadable output is a YtDlpError. */
export function parseSingleVideoJson<T extends InfoLike>(stdout: string): T {
  let info: T;
  try {
    info = JSON.parse(stdout) as T;
  } catch {
    throw new YtDlpError('failed', 'yt-dlp printed no readable metadata');
  }
  if (info._type === 'playlist') {
    const one = oneVideoOf(info);
    if (!one) throw new YtDlpError('unsupported', 'The URL is a playlist; pass the URL of a single video');
    return one;
  }
  return unnumbered(info);
}

/**
 * yt-dlp numbers the videos it finds in a page ("Title (1)", id "page-1") even when the page's
 * views of one file (og:video, JSON-LD, a <video> element) leave a single one: the page's title is
 * the video's title.
 */
function unnumbered<T extends InfoLike>(info: T): T {
  const n = /-(\d+)$/.exec(info.id ?? '')?.[1];
  const suffix = n ? ` (${n})` : null;
  if (!suffix || !info.title?.endsWith(suffix) || !/^(HTML5MediaEmbed|Generic)$/.test(info.extractor_key ?? '')) return info;
  const title = info.title.slice(0, -suffix.length);
  return { ...info, title, fulltitle: title };
}

const HTTP_REASON: Record<string, string> = { '401': 'login required', '403': 'access denied', '404': 'not found', '410': 'gone', '429': 'too many requests' };

/**
 * Turns yt-dlp's last ERROR line into a classified YtDlpError whose message is a sentence a user can
 * act on; yt-dlp's own words (exception reprs, "--verbose" advice) stay in `raw`, for the logs.
 */
export function classify(stderr: string, url: string): YtDlpError {
  const raw =
    stderr
      .split('\n')
      .filter((l) => l.startsWith('ERROR:'))
      .pop()
      ?.replace(/^ERROR:\s*/, '')
      .replace(/^\[[^\]]+\]\s*/, '') ??
    // without an ERROR line its last other line says why; a warning printed before it never does
    stderr
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('WARNING:') && !/^\s/.test(l))
      .pop() ??
    'yt-dlp failed';
  // "Unable to download webpage: HTTP Error 404: Not Found (caused by <HTTPError 404: …>)" → its first clause
  const line = raw.replace(/\s*\(caused by .*$/, '').replace(/;\s*please report this issue.*$/i, '').replace(/\s+/g, ' ').trim();
  const make = (kind: YtDlpErrorKind, message: string) => Object.assign(new YtDlpError(kind, message), { raw });
  if (/file:\/\/ URLs are disabled/i.test(line)) return make('filtered', 'The source refers to local files (file:// URLs), which are never read');
  const scheme = /Unsupported url scheme:? "?([a-z][a-z0-9+.-]*)/i.exec(line);
  if (scheme) return make('filtered', `The source refers to ${scheme[1]!.toLowerCase()}: URLs, which are never read (only http and https are)`);
  // a redirect to a host name no resolver would take ("localhost..", an empty label)
  if (/idna|label empty or too long|InvalidURL|Failed to parse|nonnumeric port|Invalid (host|URL)/i.test(line)) {
    return make('filtered', 'The source redirected to an address that is not a valid host name');
  }
  if (/Unsupported URL|no video formats|No media found|not a valid URL|is not a valid URL/i.test(line)) {
    return make('unsupported', `No platform handler supports ${url}: it is not a video page, a playlist of one video, or a media file`);
  }
  const http = /HTTP Error (\d{3})/.exec(line);
  if (http?.[1] === '429' || /too many requests|rate[- ]limit/i.test(line)) return make('refused', 'The platform is refusing requests from this service for now (too many requests)');
  if (/confirm you.?re not a (bot|robot)|sign in to confirm|captcha|are you a robot/i.test(line)) return make('refused', 'The platform is refusing requests from this service for now (it asks to sign in to prove it is not a bot)');
  if (http && http[1]!.startsWith('4')) return make('unavailable', `The source is not available: the site answered HTTP ${http[1]}${HTTP_REASON[http[1]!] ? ` (${HTTP_REASON[http[1]!]})` : ''}`);
  if (/Video unavailable|Private video|removed|not available|does not exist/i.test(line)) return make('unavailable', `The source is not available: ${line.replace(/^[^:]*?:\s*/, '')}`);
  if (/fragment \d+ not found/i.test(line)) return make('unavailable', 'The source is incomplete: part of the stream could not be fetched');
  if (/ffmpeg exited with code/i.test(line)) {
    return make('unsupported', 'The stream can only be fetched by handing it to ffmpeg (e.g. SAMPLE-AES encryption or a live stream), which this service does not do');
  }
  return make('failed', `Reading the source failed: ${withoutInternals(line)}`);
}
