// yt-dlp's WARNING lines (stderr): each distinct one of a run logged once, with the job and the site,
// and counted by kind (mediasvc_ytdlp_warnings_total), so a platform's slow breakage (a JS runtime
// gone, SABR-only formats, missing PO tokens) shows before jobs fail. The kinds match the texts
// yt-dlp 2026.10.26 prints (yt_dlp/extractor/youtube/_video.py, jsc/, pot/).
import { log } from '../../lib/logger';
import { countYtdlpWarning, type YtdlpWarningKind } from '../../lib/metrics';
import { platformOfUrl } from '../../lib/source-sites';

/** The distinct warnings of a run's stderr, without their `WARNING: ` prefix; a message yt-dlp continued on indented lines is one. */
export function ytdlpWarnings(stderr: string): string[] {
  const out: string[] = [];
  let current: string | null = null;
  const flush = () => {
    if (current !== null && !out.includes(current)) out.push(current);
    current = null;
  };
  for (const line of stderr.split('\n')) {
    if (line.startsWith('WARNING:')) {
      flush();
      current = line.slice('WARNING:'.length).trim();
    } else if (current !== null && /^\s+\S/.test(line)) {
      current += ` ${line.trim()}`;
    } else flush();
  }
  flush();
  return out;
}

/**
 * Keeps a run's warning lines (and their indented continuations) as they arrive on stderr: the
 * stderr a run returns is only its tail, which a long download's progress lines fill.
 */
export function warningCollector(): { onLine: (line: string, stream: 'stdout' | 'stderr') => void; text: () => string } {
  const kept: string[] = [];
  let inWarning = false;
  return {
    onLine(line, stream) {
      if (stream !== 'stderr') return;
      inWarning = line.startsWith('WARNING:') || (inWarning && /^\s+\S/.test(line));
      if (inWarning && kept.length < 500) kept.push(line);
    },
    text: () => kept.join('\n'),
  };
}

/** Patterns in the order they are tried: a SABR warning also says formats were skipped, a challenge failure that formats may be missing. */
const KINDS: [YtdlpWarningKind, RegExp][] = [
  // "No supported JavaScript runtime could be found…", "n challenge solving failed…", "Signature solving failed…", a solver script skipped or refused
  ['no_js_runtime', /JavaScript runtime|challenge solving failed|Signature solving failed|challenge solver .*script|Remote components? .*skipped|JS challenge|\[jsc(:[^\]]*)?\]/i],
  // "…formats have been skipped as they are missing a URL. YouTube may have enabled the SABR-only streaming experiment…"
  ['sabr_only', /\bSABR\b/],
  // "…formats require a GVS PO Token which was not provided", "Unable to fetch GVS PO Token…", a PO token provider's own warnings
  ['po_token', /PO Token|\[pot(:[^\]]*)?\]/i],
  // "Some formats may be missing", "…formats have been skipped…", "Only images are available for download", "Requested format is not available"
  ['formats_missing', /formats? (may be|are|is|have been|has been) (missing|skipped|not available)|formats have been skipped|Only images are available|Requested formats? (is|are) not available|no (video )?formats/i],
];

export function warningKind(text: string): YtdlpWarningKind {
  return KINDS.find(([, re]) => re.test(text))?.[0] ?? 'other';
}

/** Logs (once each) and counts the warnings of one run of yt-dlp on `url`. */
export function noteYtdlpWarnings(stderr: string, url: string, context?: { jobId?: string }): void {
  for (const text of ytdlpWarnings(stderr)) {
    const kind = warningKind(text);
    countYtdlpWarning(kind);
    const warning = text.length > 600 ? `${text.slice(0, 600)}…` : text;
    log.warn({ job_id: context?.jobId, site: platformOfUrl(url), kind, warning }, `yt-dlp warned (${kind}): ${warning}`);
  }
}
