// Settings per source site (an outbound proxy, a concurrency cap): a site is a domain, and a host
// takes the setting of its longest configured suffix (www.youtube.com → youtube.com).

/** The key of a site: `youtube.com`, `YouTube.com.` and the env suffix `youtube_com` are one key. */
export function siteKey(site: string): string {
  return site.toLowerCase().replace(/^\.+|\.+$/g, '').replace(/[^a-z0-9]/g, '_');
}

/** The configured site a host belongs to (its longest suffix among `keys`), or null. */
export function siteOf(host: string, keys: { has(key: string): boolean }): string | null {
  const labels = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '').split('.');
  for (let i = 0; i < labels.length; i++) {
    const key = siteKey(labels.slice(i).join('.'));
    if (keys.has(key)) return key;
  }
  return null;
}

const PROXY_PROTOCOLS = new Set(['http:', 'https:', 'socks5:', 'socks5h:']);

/** A source proxy URL as configured (http://, https:// or socks5://, credentials allowed), or "direct"; throws a readable error. */
export function parseSourceProxy(value: string, name: string): string | null {
  if (value.trim().toLowerCase() === 'direct') return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new Error(`${name}: not a URL (e.g. http://user:password@proxy.example:3128, socks5://proxy.example:1080, or "direct")`);
  }
  if (!PROXY_PROTOCOLS.has(url.protocol)) throw new Error(`${name}: a source proxy is http://, https:// or socks5://, not ${url.protocol}//`);
  if (url.pathname !== '/' && url.pathname !== '' ) throw new Error(`${name}: a proxy URL has no path`);
  return url.href;
}

/** A proxy URL fit for logs, health output and errors: the password never appears. */
export function redactedProxy(href: string): string {
  const url = new URL(href);
  if (url.password) url.password = '***';
  return url.href.replace(/\/$/, '');
}

export interface SourceProxySettings {
  /** SOURCE_PROXY_URL: every source connection's proxy, or null (straight out). */
  default: string | null;
  /** SOURCE_PROXY_URL__<site>: a site's own proxy, or null ("direct") to send it straight out. */
  bySite: Record<string, string | null>;
}

/** SOURCE_PROXY_URL and its per-site overrides (SOURCE_PROXY_URL__youtube_com=…) from the environment. */
export function sourceProxySettings(env: NodeJS.ProcessEnv): SourceProxySettings {
  const bySite: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(env)) {
    const m = /^SOURCE_PROXY_URL__(\w+)$/.exec(name);
    if (m && value) bySite[siteKey(m[1]!)] = parseSourceProxy(value, name);
  }
  return { default: env.SOURCE_PROXY_URL ? parseSourceProxy(env.SOURCE_PROXY_URL, 'SOURCE_PROXY_URL') : null, bySite };
}

/**
 * YTDLP_EXTRACTOR_ARGS__<site>: yt-dlp `--extractor-args` for that site's runs alone, e.g.
 * `YTDLP_EXTRACTOR_ARGS__youtube_com='youtube:player_client=default,mweb'`; several are separated by
 * spaces (one per extractor key). Throws a readable error.
 */
export function ytdlpExtractorArgsBySite(env: NodeJS.ProcessEnv): Record<string, string[]> {
  const bySite: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(env)) {
    const m = /^YTDLP_EXTRACTOR_ARGS__(\w+)$/.exec(name);
    if (!m || !value?.trim()) continue;
    const args = value.trim().split(/\s+/);
    const bad = args.find((a) => !/^[A-Za-z0-9_-]+:\S+$/.test(a));
    if (bad) throw new Error(`${name}: "${bad}" is not KEY:ARGS (e.g. youtube:player_client=default,mweb or youtubepot-bgutilhttp:base_url=http://127.0.0.1:4416)`);
    bySite[siteKey(m[1]!)] = args;
  }
  return bySite;
}

export interface PlatformConcurrency {
  /** Steps talking to a site not named, at once (null: no cap). */
  default: number | null;
  bySite: Record<string, number>;
}

/** PLATFORM_CONCURRENCY, e.g. `youtube.com=4,vimeo.com=2,default=16`; throws a readable error. */
export function parsePlatformConcurrency(value: string): PlatformConcurrency {
  const out: PlatformConcurrency = { default: null, bySite: {} };
  for (const part of value.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9.-]+)\s*=\s*([1-9]\d{0,3})$/.exec(part);
    if (!m) throw new Error(`PLATFORM_CONCURRENCY: "${part}" is not SITE=N (e.g. youtube.com=4,default=16)`);
    if (m[1]!.toLowerCase() === 'default') out.default = Number(m[2]);
    else out.bySite[siteKey(m[1]!)] = Number(m[2]);
  }
  return out;
}

/**
 * The platform a source URL belongs to, for its circuit breaker: the host without `www.`/`m.`, as
 * its last two labels (youtube.com for www.youtube.com and m.youtube.com; an IP or one-label host as
 * it is). Pure string work: job workflows call it.
 */
export function platformOfUrl(url: string): string | null {
  // http(s) only: an upload (upload://…) has no platform
  const m = /^https?:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]+)/i.exec(url);
  if (!m) return null;
  const host = m[1]!.toLowerCase().replace(/\.$/, '');
  if (host.startsWith('[') || /^\d+(\.\d+){3}$/.test(host)) return host;
  const labels = host.split('.');
  return labels.slice(-2).join('.');
}

export interface BreakerSettings {
  /** Refusals within the window that open a platform's breaker. */
  threshold: number;
  windowMs: number;
  /** The first wait before a probe; it doubles after each failed probe, up to maxBackoffMs. */
  probeAfterMs: number;
  maxBackoffMs: number;
  /** How long a job waits for its platform before it fails (refunded). */
  maxWaitMs: number;
}
