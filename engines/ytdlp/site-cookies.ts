// Cookies per site (`mediasvc cookies set --site youtube.com FILE`): a Netscape cookie file, as
// yt-dlp and browser exporters write it, kept only for the cookies of that site and sealed with the
// secrets key (one file per site in COOKIES_DIR). yt-dlp gets a site's cookies for that site's
// sources alone, in a file of the run's own; its cookie jar then sends a host-only cookie to its host
// alone and a domain cookie to its domain and subdomains, so a redirect to another host, or a media
// URL on another origin, carries none it should not.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { urlHost } from '../../lib/address-policy';
import type { Config } from '../../lib/config';
import { log } from '../../lib/logger';
import { loadSecretBox, type SecretBox } from '../../lib/secret-box';
import { siteKey, siteOf } from '../../lib/source-sites';

export interface NetscapeCookie {
  domain: string;
  includeSubdomains: boolean;
  path: string;
  secure: boolean;
  /** Unix seconds; 0 for a session cookie. */
  expires: number;
  name: string;
  value: string;
}

export class CookieFileError extends Error {}

/** The cookies of a Netscape cookie file (`#HttpOnly_` lines included); a line that is not one is an error naming it. */
export function parseNetscapeCookies(text: string): NetscapeCookie[] {
  const out: NetscapeCookie[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    let line = raw.trim();
    if (line.startsWith('#HttpOnly_')) line = line.slice('#HttpOnly_'.length);
    else if (!line || line.startsWith('#')) continue;
    const f = line.split('\t');
    if (f.length !== 7 || !/^\d+$/.test(f[4]!) || !/^(TRUE|FALSE)$/i.test(f[1]!) || !/^(TRUE|FALSE)$/i.test(f[3]!)) {
      throw new CookieFileError(`line ${i + 1} is not a Netscape cookie line (7 tab-separated fields: domain, subdomains, path, secure, expiry, name, value)`);
    }
    out.push({ domain: f[0]!.toLowerCase(), includeSubdomains: /^true$/i.test(f[1]!), path: f[2]!, secure: /^true$/i.test(f[3]!), expires: Number(f[4]), name: f[5]!, value: f[6]! });
  }
  return out;
}

/**
 * A cookie line as Python's cookie jar (yt-dlp's) loads it: the leading dot exactly when the
 * subdomain flag is TRUE (it refuses the file otherwise), the flag deciding, as in curl's format (an
 * exporter's `.host FALSE` stays host-only: its host alone gets it, sitecustomize.py makes the jar
 * keep to that), and a host without a dot (an intranet name) as `name.local`, the name its jar
 * matches such a host by.
 */
function jarLine(c: NetscapeCookie): string {
  const sub = c.includeSubdomains;
  const bare = c.domain.replace(/^\./, '');
  const domain = `${sub ? '.' : ''}${bare.includes('.') ? bare : `${bare}.local`}`;
  return [domain, sub ? 'TRUE' : 'FALSE', c.path, c.secure ? 'TRUE' : 'FALSE', String(c.expires), c.name, c.value].join('\t');
}

function toNetscape(cookies: NetscapeCookie[]): string {
  const lines = cookies.map(jarLine);
  return ['# Netscape HTTP Cookie File', ...lines, ''].join('\n');
}

/** Whether a cookie's domain is the site or one of its subdomains. */
function ofSite(cookie: NetscapeCookie, site: string): boolean {
  const d = cookie.domain.replace(/^\./, '');
  return d === site || d.endsWith(`.${site}`);
}

export interface SiteCookiesSummary {
  site: string;
  cookies: number;
  /** The earliest expiry among them (null: session cookies only). */
  expiresAt: Date | null;
  updatedAt: Date;
}

interface StoredCookies {
  site: string;
  cookies: number;
  expires_at: string | null;
  updated_at: string;
  sealed: string;
}

const PURPOSE = 'site-cookies';

export class CookieStore {
  private opened: SecretBox | null = null;

  /** `box`: the secrets key ring, opened on first use (a worker with no cookies never needs it). */
  constructor(
    readonly dir: string,
    private readonly openBox: () => SecretBox,
  ) {}

  private get box(): SecretBox {
    this.opened ??= this.openBox();
    return this.opened;
  }

  private fileOf(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }

  /** Keeps the site's cookies of `text` (others dropped, and counted); replaces what the site had. */
  set(site: string, text: string, now = new Date()): SiteCookiesSummary & { dropped: number } {
    const name = site.toLowerCase().replace(/^\.+|\.+$/g, '');
    if (!/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(name)) throw new CookieFileError(`--site takes a domain such as youtube.com, not "${site}"`);
    const all = parseNetscapeCookies(text);
    const kept = all.filter((c) => ofSite(c, name));
    if (!kept.length) throw new CookieFileError(`the file holds no cookie for ${name} (${all.length} for other sites)`);
    const expiries = kept.map((c) => c.expires).filter((e) => e > 0);
    const stored: StoredCookies = {
      site: name,
      cookies: kept.length,
      expires_at: expiries.length ? new Date(Math.min(...expiries) * 1000).toISOString() : null,
      updated_at: now.toISOString(),
      sealed: this.box.seal(toNetscape(kept), `${PURPOSE}:${siteKey(name)}`),
    };
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = this.fileOf(siteKey(name));
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(stored), { mode: 0o600 });
    fs.renameSync(tmp, file);
    return { ...summaryOf(stored), dropped: all.length - kept.length };
  }

  /** Sites with cookies, with counts and expiry; never the values. */
  list(): SiteCookiesSummary[] {
    return this.keys()
      .map((k) => this.read(k))
      .filter((s): s is StoredCookies => s !== null)
      .map(summaryOf)
      .sort((a, b) => a.site.localeCompare(b.site));
  }

  /** Removes a site's cookies; false when it had none. */
  delete(site: string): boolean {
    const file = this.fileOf(siteKey(site));
    if (!fs.existsSync(file)) return false;
    fs.rmSync(file);
    return true;
  }

  /** The site whose cookies apply to a URL's host (its longest stored suffix), or null. */
  siteFor(url: string): string | null {
    let host: string;
    try {
      host = urlHost(url).host;
    } catch {
      return null;
    }
    return siteOf(host, new Set(this.keys()));
  }

  /**
   * A cookie file of the run's own (mode 0600, in a private folder) holding the cookies of the URL's
   * site, or null when the site has none; `remove` deletes it (yt-dlp writes the jar back at exit).
   */
  fileFor(url: string): { path: string; remove: () => void } | null {
    const key = this.siteFor(url);
    const stored = key ? this.read(key) : null;
    if (!key || !stored) return null;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-cookies-'));
    const file = path.join(dir, `${crypto.randomUUID()}.txt`);
    fs.writeFileSync(file, this.box.open(stored.sealed, `${PURPOSE}:${key}`), { mode: 0o600 });
    return { path: file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
  }

  private keys(): string[] {
    try {
      return fs.readdirSync(this.dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length));
    } catch {
      return [];
    }
  }

  private read(key: string): StoredCookies | null {
    try {
      return JSON.parse(fs.readFileSync(this.fileOf(key), 'utf8')) as StoredCookies;
    } catch {
      return null;
    }
  }
}

function summaryOf(s: StoredCookies): SiteCookiesSummary {
  return { site: s.site, cookies: s.cookies, expiresAt: s.expires_at ? new Date(s.expires_at) : null, updatedAt: new Date(s.updated_at) };
}

const stores = new Map<string, CookieStore>();

/** This process's cookie store for COOKIES_DIR, sealed with the secrets key (one per folder). */
export function processCookieStore(config: Pick<Config, 'cookiesDir' | 'secrets'>): CookieStore {
  let store = stores.get(config.cookiesDir);
  if (!store) {
    store = new CookieStore(config.cookiesDir, () => loadSecretBox(config.secrets, (msg) => log.warn(msg)));
    stores.set(config.cookiesDir, store);
  }
  return store;
}
