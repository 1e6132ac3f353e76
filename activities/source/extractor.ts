// A page (or anything else that is not an upload or a plain media file) opened by yt-dlp: probed,
// then read in place when it names one seekable file, else downloaded from the probe's own info JSON.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { displaySize } from '../../engines/ffmpeg/display';
import { ytdlpSelection } from '../../engines/ytdlp/format-selection';
import type { DownloadRequest, RunContext, YtDlpInfo } from '../../engines/ytdlp/ytdlp.engine';
import { JobFailure } from '../../lib/job-failure';
import type { SourceLimits } from '../../lib/plans';
import { throughEgress } from '../step/egress-run';
import { assertClipWithin } from '../step/failures';
import { alive, keepAlive, progressReporter } from '../step/heartbeat';
import { watchDownload } from './download-watch';
import { byteRangesOf, indexProbe } from './in-place';
import { downloadFolder, overLimit, PAGE_EXTRACTORS, seekableFormat, toFailure, withinLimits } from './source-facts';
import type { PlatformSubtitles } from './types';
import type { DownloadSourceInput, FetchedSource, ResolvedSource, ResolveSourceInput, SourceDeps } from './types';

/** yt-dlp's info for a URL (the address checked by the caller), with the rendition `selection` picks when given. */
export async function probeWithYtdlp(deps: Pick<SourceDeps, 'ytdlp' | 'egress'>, url: string, selection?: { format: string; sort?: string }, context: RunContext = stepContext()): Promise<YtDlpInfo> {
  const stop = keepAlive();
  try {
    const signal = Context.current().cancellationSignal;
    return await throughEgress(deps.egress, url, (proxyUrl) => deps.ytdlp.probe(url, { proxyUrl, signal, ...selection, context }));
  } catch (err) {
    throw toFailure(err);
  } finally {
    stop();
  }
}

/** The job a step runs for, from its workflow's id (`job-{job_id}`); an info read has none. */
function stepContext(): RunContext {
  const id = Context.current().info.workflowExecution?.workflowId ?? '';
  return id.startsWith('job-') ? { jobId: id.slice('job-'.length) } : {};
}

/**
 * A URL yt-dlp took for a media file itself (a direct link, or the one file a generic page points
 * to) carries little metadata: duration, size and streams are measured with ffprobe (the picture's
 * size as a player shows it). A "file" in
 * which ffprobe finds no audio or video (a text file, say) is not media: unsupported, like any other URL.
 */
export async function measureDirect(deps: Pick<SourceDeps, 'ffmpeg' | 'egress'>, url: string, info: YtDlpInfo): Promise<YtDlpInfo> {
  const single = info.formats?.length === 1 ? info.formats[0] : undefined;
  const target = single ? single.url : info.url;
  // a generic page's one progressive file (not a manifest, which ffmpeg never opens here)
  const pageFile = PAGE_EXTRACTORS.has(info.extractor_key ?? '') && /^https?$/.test(single?.protocol ?? info.protocol ?? '');
  if (!(info.direct || pageFile) || !target || (info.duration && info.height)) return info;
  const signal = Context.current().cancellationSignal;
  const p = await alive(() => throughEgress(deps.egress, target, (proxyUrl) => deps.ffmpeg.probe(target, { proxyUrl, signal }).catch(() => null)));
  const v = p?.streams.find((s) => s.codec_type === 'video');
  const a = p?.streams.find((s) => s.codec_type === 'audio');
  if (!p || (!v && !a)) {
    throw JobFailure.user('unsupported', `No platform handler supports ${url}: it is not a video page, a playlist of one video, or a media file`);
  }
  const fps = v?.avg_frame_rate?.split('/').map(Number);
  const shown = displaySize(v);
  return {
    ...info,
    duration: info.duration ?? p.format.duration ?? null,
    width: info.width ?? shown?.width ?? null,
    height: info.height ?? shown?.height ?? null,
    fps: info.fps ?? (fps && fps[1] ? Math.round((fps[0]! / fps[1]) * 1000) / 1000 : null),
    vcodec: info.vcodec ?? (v ? v.codec_name : 'none') ?? null,
    acodec: info.acodec ?? (a ? a.codec_name : 'none') ?? null,
    filesize: info.filesize ?? p.format.size ?? null,
    chapters: info.chapters?.length ? info.chapters : (p.chapters ?? []),
  };
}

/** Downloads with yt-dlp into the job's work folder (heartbeats, cancellation, size limit); returns the file's absolute path. */
export async function downloadWithYtdlp(
  deps: Pick<SourceDeps, 'ytdlp' | 'ffmpeg' | 'storage' | 'egress'>,
  input: DownloadSourceInput,
  limits: SourceLimits,
  extra: Pick<DownloadRequest, 'matchFilter' | 'writeInfoJson' | 'infoJson' | 'subtitleLanguages'> = {},
): Promise<string> {
  const report = progressReporter(input.progressRange);
  const stop = keepAlive();
  const sel = ytdlpSelection(input.quality, input.format);
  const outDir = downloadFolder(deps.storage.workDirOf(input.jobId), input.slot);
  const watch = watchDownload(outDir, limits, deps.ffmpeg, Context.current().cancellationSignal);
  try {
    return await throughEgress(deps.egress, input.url, (proxyUrl) => deps.ytdlp.download({
      url: input.url,
      proxyUrl,
      outDir,
      format: sel.format,
      sort: sel.sort,
      maxFilesize: limits.maxBytes,
      ...extra,
      signal: watch.signal,
      onProgress: (p) => p.fraction !== null && report(p.fraction),
      context: { jobId: input.jobId },
    }));
  } catch (err) {
    const over = watch.exceeded();
    throw over ? overLimit(over.message) : toFailure(err, limits);
  } finally {
    watch.stop();
    stop();
  }
}

/** One yt-dlp probe at most before any bytes move: the limits checked, then read in place or downloaded from that probe's info JSON. */
export async function openWithYtdlp(deps: SourceDeps, input: ResolveSourceInput, limits: SourceLimits): Promise<ResolvedSource> {
  const info = await probeWithYtdlp(deps, input.url, ytdlpSelection(input.quality, input.format), { jobId: input.jobId });
  const summary = withinLimits(deps.config, info, limits);
  assertClipWithin(input.clipStart, input.clipEnd, summary.duration);
  // with the site's cookies, only yt-dlp (which holds them) fetches its media: no reading in place
  const media = input.reads === 'whole' || deps.ytdlp.hasCookiesFor(input.url) ? null : seekableFormat(info, input.reads);
  const ranges = media && (await byteRangesOf(media.url, deps.config.allowPrivateNetwork, media.headers));
  // without an MP4 index to read here, the processing step probes the URL itself
  if (media && ranges) return { ...summary, sourceFile: null, media: { ...media, probe: await indexProbe(ranges, deps.config.allowPrivateNetwork, media.headers), maxBytes: limits.maxBytes } };
  const workDir = deps.storage.workDirOf(input.jobId);
  const infoJson = path.join(workDir, 'download', 'probe.info.json');
  await fs.mkdir(path.dirname(infoJson), { recursive: true });
  await fs.writeFile(infoJson, JSON.stringify(info));
  const file = await downloadWithYtdlp(deps, input, limits, { infoJson, ...(input.subtitles?.length ? { subtitleLanguages: input.subtitles } : {}) });
  const subtitleFiles = input.subtitles?.length ? await subtitlesBeside(file, input.subtitles, workDir) : undefined;
  return { ...summary, sourceFile: path.relative(workDir, file), media: null, ...(subtitleFiles ? { subtitleFiles } : {}) };
}

/** The subtitle files yt-dlp wrote beside `file` (`source.<lang>.<vtt|srt>`), one per language asked for: its own code, else a regional variant. */
async function subtitlesBeside(file: string, languages: string[], workDir: string): Promise<PlatformSubtitles[]> {
  const names = (await fs.readdir(path.dirname(file))).filter((n) => /^source\.[^.]+\.(vtt|srt)$/.test(n)).sort();
  return languages.flatMap((language) => {
    const lang = (n: string) => n.split('.')[1]!;
    const name = names.find((n) => lang(n) === language) ?? names.find((n) => lang(n).startsWith(`${language}-`));
    return name ? [{ language, file: path.relative(workDir, path.join(path.dirname(file), name)) }] : [];
  });
}

/** Fetched in one yt-dlp run, its limits (live, duration) as a match filter, title and duration from the info JSON it writes. */
export async function fetchWithYtdlp(deps: SourceDeps, input: DownloadSourceInput, limits: SourceLimits): Promise<FetchedSource> {
  const filter = [deps.config.allowLive ? null : '!is_live', `duration <=? ${limits.maxSeconds}`].filter(Boolean).join(' & ');
  const file = await downloadWithYtdlp(deps, input, limits, { matchFilter: filter, writeInfoJson: true });
  const info = JSON.parse(await fs.readFile(path.join(path.dirname(file), 'source.info.json'), 'utf8')) as YtDlpInfo;
  return { sourceFile: path.relative(deps.storage.workDirOf(input.jobId), file), title: info.title ?? info.id, duration: typeof info.duration === 'number' ? info.duration : null };
}
