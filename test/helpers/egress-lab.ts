/*
 * The egress attack lab (test/egress.test.ts runs it). As root, inside a network and mount namespace
 * of its own (`unshare --net --mount --fork`), it builds a small internet: a "public" origin on
 * 11.22.33.44 (public.test), a PeerTube instance on 11.22.33.45, a rebinding DNS server on
 * 11.22.33.53, and canaries on 127.0.0.1, ::1 and 169.254.169.254 that record every request. It runs
 * the real `serve` WITHOUT ALLOW_PRIVATE_NETWORK, submits every attack as every kind of job, as an
 * info read and as webhook targets, plus legitimate jobs from the public origin, and writes what it
 * observed as JSON. It never asserts; the test does. Nothing here can leave the namespace: its only
 * interface is its own loopback.
 */
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { PLANS } from '../../accounts/entity';
import { projectRoot } from '../../lib/config';
import { ensureMedia, fixtureCacheDir, startFixturePlatform } from './fixture-platform';
import { ledgerByJob, querySqlite } from './ledger';
import { PT_VIDEOS, startPeerTubeFixture } from './peertube-fixture';
import { startServeStack, type ServeStack } from './serve-stack';
import { SPEECH_DIR } from './speech-fixtures';

export const LAB = { public: '11.22.33.44', peertube: '11.22.33.45', dns: '11.22.33.53', metadata: '169.254.169.254' } as const;
/** The canaries' port on 127.0.0.1 and ::1 (169.254.169.254 listens on 80). */
export const CANARY_PORT = 8765;
const C = CANARY_PORT;

/** Every kind of request a source URL can arrive in: the six job types (four previews) and info. */
export const JOB_KINDS = {
  download: (url: string) => ['/v1/download', { url }],
  gif: (url: string) => ['/v1/preview', { url, preview_type: 'gif', duration: 1, width: 160 }],
  thumbnail: (url: string) => ['/v1/preview', { url, preview_type: 'thumbnail', width: 160 }],
  mosaic: (url: string) => ['/v1/preview', { url, preview_type: 'mosaic', columns: 2, rows: 2, width: 320 }],
  clip: (url: string) => ['/v1/preview', { url, preview_type: 'clip', duration: 1, width: 160 }],
  fingerprint: (url: string) => ['/v1/fingerprint', { url, hash_size: 8 }],
  transcribe: (url: string) => ['/v1/transcribe', { url, model_size: 'tiny', language: 'en', output_format: 'json' }],
  translate: (url: string) => ['/v1/translate', { url, target_language: 'es', source_language: 'en', model_size: 'tiny' }],
  comments: (url: string) => ['/v1/comments', { url, max_comments: 5 }],
} as const satisfies Record<string, (url: string) => readonly [string, Record<string, unknown>]>;
export type JobKind = keyof typeof JOB_KINDS;

/** Sources that look public and lead somewhere private (the issue's table, rebinding, local files). */
export const ATTACKS = {
  'redirect to 127.0.0.1': () => 'http://public.test/attack/redirect-loopback',
  'redirect to 169.254.169.254': () => 'http://public.test/attack/redirect-metadata',
  'redirect to [::1]': () => 'http://public.test/attack/redirect-v6',
  'HLS segments on 127.0.0.1': () => 'http://public.test/attack/hls-private.m3u8',
  'DASH BaseURL on 127.0.0.1': () => 'http://public.test/attack/dash-private.mpd',
  'HLS AES-128 key URI on 127.0.0.1': () => 'http://public.test/attack/hls-key.m3u8',
  'og:video on 127.0.0.1': () => 'http://public.test/attack/og',
  'JSON-LD contentUrl on 127.0.0.1': () => 'http://public.test/attack/jsonld',
  '<video src> on 127.0.0.1': () => 'http://public.test/attack/video-tag',
  'DNS rebinding: public twice, then 127.0.0.1': (n: number) => `http://rebind2-${n}.test:${C}/private.mp4`,
  'local file: HLS segments file:///etc/passwd': () => 'http://public.test/attack/hls-file.m3u8',
  'local file: a "video" that is an HLS playlist of file:///etc/passwd': () => 'http://public.test/attack/evil-hls.mp4',
  'local file: a "video" that is an ffconcat list of /etc/passwd': () => 'http://public.test/attack/evil-concat.mp4',
  'local file: HLS segment subfile:/concat: of /etc/passwd': () => 'http://public.test/attack/hls-subfile.m3u8',
} as const;
export type AttackName = keyof typeof ATTACKS;

/** A PeerTube channel on an instance yt-dlp's PeerTube extractor knows by name, served over TLS in the lab. */
export const PEERTUBE_CHANNEL = { host: 'framatube.org', name: 'fixture_channel', videos: ['pt1ShortUuidAaaaaaaaaa1', 'pt1ShortUuidAaaaaaaaaa2', 'pt1ShortUuidAaaaaaaaaa3'] } as const;

/** A podcast feed on public.test whose items lead to private addresses, one public item among them. */
export const FEED_ITEMS = {
  'literal 127.0.0.1': `http://127.0.0.1:${C}/private.mp4`,
  'literal [::1]': `http://[::1]:${C}/private.mp4`,
  'metadata address': `http://${LAB.metadata}/private.mp4`,
  'a name for 127.0.0.1': `http://canary.test:${C}/private.mp4`,
  'DNS rebinding': `http://rebind1-feed.test:${C}/private.mp4`,
  'redirect to 127.0.0.1': 'http://public.test/attack/redirect-loopback',
  public: 'http://public.test/media/v480.mp4',
} as const;

function feedOf(items: Record<string, string>): string {
  const entries = Object.entries(items).map(([name, url], i) => `<item><title>${name}</title><guid>item-${i}</guid><enclosure url="${url}" type="video/mp4"/></item>`);
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>Attack feed</title>${entries.join('')}</channel></rss>`;
}

/** URLs that name a private address directly, in every spelling that has fooled parsers. */
export const LITERALS = {
  loopback: `http://127.0.0.1:${C}/private.mp4`,
  'IPv6 loopback': `http://[::1]:${C}/private.mp4`,
  'cloud metadata': `http://${LAB.metadata}/private.mp4`,
  decimal: `http://2130706433:${C}/private.mp4`,
  hex: `http://0x7f000001:${C}/private.mp4`,
  octal: `http://0177.0.0.1:${C}/private.mp4`,
  short: `http://127.1:${C}/private.mp4`,
  zero: `http://0:${C}/private.mp4`,
  'IPv4-mapped': `http://[::ffff:127.0.0.1]:${C}/private.mp4`,
  'IPv4-mapped hex': `http://[::ffff:7f00:1]:${C}/private.mp4`,
  'IPv4-compatible': `http://[::127.0.0.1]:${C}/private.mp4`,
  NAT64: `http://[64:ff9b::7f00:1]:${C}/private.mp4`,
  'local-use NAT64': `http://[64:ff9b:1::a00:1]:${C}/private.mp4`,
  '6to4': `http://[2002:7f00:1::]:${C}/private.mp4`,
  Teredo: `http://[2001::1]:${C}/private.mp4`,
  'link-local IPv6': `http://[fe80::1]:${C}/private.mp4`,
  'full-width digits': `http://１２７.０.０.１:${C}/private.mp4`,
  'userinfo @': `http://public.test@127.0.0.1:${C}/private.mp4`,
  'backslash userinfo': `http://public.test\\@127.0.0.1:${C}/private.mp4`,
  CGNAT: 'http://100.64.0.1/private.mp4',
  'TEST-NET-1': 'http://192.0.2.1/private.mp4',
  '6to4 relay': 'http://192.88.99.1/private.mp4',
  'a name that resolves to 127.0.0.1': `http://canary.test:${C}/private.mp4`,
} as const;

export interface Created {
  status: number;
  detail?: string;
  jobId?: string;
  creditsCharged?: number;
  finalStatus?: string;
  errorMessage?: string | null;
  resultData?: Record<string, unknown> | null;
  downloadUrl?: string | null;
  charges?: number;
  refunds?: number;
}

export interface LabReport {
  attacks: Record<string, Partial<Record<JobKind | 'info', Created>>>;
  literals: Record<string, { jobs: Partial<Record<JobKind, Created>>; info: Created; webhookUrl: Created; endpoint: { status: number; detail?: string } }>;
  webhooks: {
    redirectEndpoint: { status: number | null; error: string | null };
    privateNameEndpoint: { created: number; status: number | null; error: string | null };
    perJobRedirect: { job: Created; deliveries: { status: string; status_code: number | null; error: string | null }[] };
    perJobRebind: { job: Created; deliveries: { status: string; status_code: number | null; error: string | null }[] };
    catchAllEndpointDeliveries: { attempts: number; succeeded: number };
  };
  legit: Partial<Record<JobKind | 'info', Created & { probe?: Record<string, unknown> }>>;
  canaryHits: { canary: string; method: string; url: string }[];
  publicHooks: string[];
  dns: { name: string; answer: string }[];
  filesWithPasswd: string[];
  ledger: { balance: number; expected: number };
  /** A download batch of the attack feed: each item as the batch shows it; a list of a feed that redirects to 127.0.0.1. */
  batches: { feedItems: { title: string; status: string; reason: string | null; jobId: string | null }[]; feedStatus: string; redirectFeed: { status: string; error: string | null }; peertubeChannel: { status: string; error: string | null; items: { url: string; title: string | null }[] } };
}

function sh(cmd: string, ...args: string[]): void {
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The private network and the name service of the lab: hosts file, resolver, nsswitch. */
function setUpNetwork(dir: string): void {
  sh('ip', 'link', 'set', 'lo', 'up');
  for (const a of [LAB.public, LAB.peertube, LAB.dns, LAB.metadata]) sh('ip', 'addr', 'add', `${a}/32`, 'dev', 'lo');
  const files: Record<string, string> = {
    hosts: `127.0.0.1 localhost\n::1 localhost ip6-localhost\n${LAB.public} public.test\n${LAB.peertube} peertube.test\n${LAB.peertube} ${PEERTUBE_CHANNEL.host}\n127.0.0.1 canary.test\n`,
    'resolv.conf': `nameserver ${LAB.dns}\noptions timeout:1 attempts:1\n`,
    'nsswitch.conf': fs.readFileSync('/etc/nsswitch.conf', 'utf8').replace(/^hosts:.*$/m, 'hosts: files dns'),
  };
  for (const [name, text] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, name), text);
    sh('mount', '--bind', path.join(dir, name), `/etc/${name}`);
  }
}

/** A DNS server for `rebindN-…` names: the first N A answers are public, every later one 127.0.0.1. */
async function startDns(log: LabReport['dns']): Promise<dgram.Socket> {
  const counts = new Map<string, number>();
  const sock = dgram.createSocket('udp4');
  sock.on('message', (q, rinfo) => {
    let off = 12;
    const labels: string[] = [];
    while (q[off]! > 0) {
      labels.push(q.subarray(off + 1, off + 1 + q[off]!).toString('ascii'));
      off += q[off]! + 1;
    }
    const qEnd = off + 5;
    const type = q.readUInt16BE(off + 1);
    const name = labels.join('.').toLowerCase();
    const m = /^rebind(\d)-/.exec(name);
    let answer: string | null = null;
    if (m && type === 1) {
      const n = counts.get(name) ?? 0;
      counts.set(name, n + 1);
      answer = n < Number(m[1]) ? LAB.public : '127.0.0.1';
      log.push({ name, answer });
    }
    const header = Buffer.alloc(12);
    header.writeUInt16BE(q.readUInt16BE(0), 0);
    header.writeUInt16BE(m ? 0x8180 : 0x8183, 2); // NOERROR, or NXDOMAIN for names the lab does not serve
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer ? 1 : 0, 6);
    const parts = [header, q.subarray(12, qEnd)];
    if (answer) {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(1, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(0, 6); // TTL 0: every lookup asks again
      rr.writeUInt16BE(4, 10);
      answer.split('.').forEach((b, i) => rr.writeUInt8(Number(b), 12 + i));
      parts.push(rr);
    }
    sock.send(Buffer.concat(parts), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(53, LAB.dns, () => r()));
  return sock;
}

/** A canary: records every request, and serves what an attack would want (so a leak would show). */
async function startCanary(name: string, host: string, port: number, hits: LabReport['canaryHits'], media: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    hits.push({ canary: name, method: req.method ?? '', url: req.url ?? '' });
    req.resume();
    const file = req.url?.startsWith('/hls/') ? path.join(fixtureCacheDir(), req.url) : req.url?.startsWith('/dash/') ? path.join(media, req.url) : req.url === '/key.bin' ? path.join(media, 'enc', 'key.bin') : path.join(fixtureCacheDir(), 'media', 'v480.mp4');
    fs.readFile(file, (err, buf) => {
      if (err) return res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': buf.length }).end(buf);
    });
  });
  await new Promise<void>((r) => server.listen(port, host, () => r()));
  return server;
}

/** DASH and encrypted HLS renditions of the fixture video, made once with ffmpeg. */
function buildAttackMedia(dir: string): void {
  const src = path.join(fixtureCacheDir(), 'media', 'v480.mp4');
  fs.mkdirSync(path.join(dir, 'dash'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'enc'), { recursive: true });
  const ff = (args: string[], cwd: string) => execFileSync('ffmpeg', ['-v', 'error', '-y', ...args], { cwd });
  ff(['-i', src, '-map', '0', '-c', 'copy', '-f', 'dash', '-seg_duration', '2', 'manifest.mpd'], path.join(dir, 'dash'));
  fs.writeFileSync(path.join(dir, 'enc', 'key.bin'), Buffer.from('00112233445566778899aabbccddeeff', 'hex'));
  fs.writeFileSync(path.join(dir, 'enc', 'keyinfo'), `http://127.0.0.1:${C}/key.bin\n${path.join(dir, 'enc', 'key.bin')}\n`);
  ff(['-i', src, '-map', '0', '-c', 'copy', '-f', 'hls', '-hls_time', '2', '-hls_playlist_type', 'vod', '-hls_key_info_file', 'keyinfo', '-hls_segment_filename', 'seg%d.ts', 'index.m3u8'], path.join(dir, 'enc'));
}

/** The attack pages of the public origin. */
function attackRoutes(media: string) {
  const privateMp4 = `http://127.0.0.1:${C}/private.mp4`;
  const page = (head: string, body = '') => `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Totally public video</title>${head}</head><body><h1>Totally public video</h1>${body}</body></html>`;
  const hls = (segments: string[]) => `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n${segments.map((s) => `#EXTINF:2.0,\n${s}\n`).join('')}#EXT-X-ENDLIST\n`;
  const M3U8 = 'application/vnd.apple.mpegurl';
  const routes: Record<string, () => [number, Record<string, string>, string | Buffer]> = {
    '/attack/redirect-loopback': () => [302, { Location: privateMp4 }, ''],
    '/attack/feed.xml': () => [200, { 'Content-Type': 'application/rss+xml' }, feedOf(FEED_ITEMS)],
    '/attack/feed-redirect.xml': () => [302, { Location: `http://127.0.0.1:${C}/feed.xml` }, ''],
    '/attack/redirect-metadata': () => [302, { Location: `http://${LAB.metadata}/private.mp4` }, ''],
    '/attack/redirect-v6': () => [302, { Location: `http://[::1]:${C}/private.mp4` }, ''],
    '/attack/hls-private.m3u8': () => [200, { 'Content-Type': M3U8 }, hls([0, 1].map((i) => `http://127.0.0.1:${C}/hls/480/seg${i}.ts`))],
    '/attack/dash-private.mpd': () => [
      200,
      { 'Content-Type': 'application/dash+xml' },
      fs.readFileSync(path.join(media, 'dash', 'manifest.mpd'), 'utf8').replace(/<Period/, `<BaseURL>http://127.0.0.1:${C}/dash/</BaseURL><Period`),
    ],
    '/attack/hls-key.m3u8': () => [200, { 'Content-Type': M3U8 }, fs.readFileSync(path.join(media, 'enc', 'index.m3u8'), 'utf8').replace(/^seg/gm, '/attack/enc/seg')],
    '/attack/og': () => [200, { 'Content-Type': 'text/html' }, page(`<meta property="og:type" content="video.other"><meta property="og:video" content="${privateMp4}"><meta property="og:video:type" content="video/mp4">`)],
    '/attack/jsonld': () => [200, { 'Content-Type': 'text/html' }, page(`<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'VideoObject', name: 'Totally public video', contentUrl: privateMp4, uploadDate: '2024-01-01' })}</script>`)],
    '/attack/video-tag': () => [200, { 'Content-Type': 'text/html' }, page('', `<video controls><source src="${privateMp4}" type="video/mp4"></video>`)],
    '/attack/hls-file.m3u8': () => [200, { 'Content-Type': M3U8 }, hls(['file:///etc/passwd', 'file:///etc/hostname'])],
    '/attack/evil-hls.mp4': () => [200, { 'Content-Type': 'video/mp4' }, hls(['file:///etc/passwd', '/etc/passwd'])],
    '/attack/evil-concat.mp4': () => [200, { 'Content-Type': 'video/mp4' }, "ffconcat version 1.0\nfile '/etc/passwd'\nfile '/etc/hostname'\n"],
    '/attack/hls-subfile.m3u8': () => [200, { 'Content-Type': M3U8 }, hls(['subfile,,start,0,end,0,,:/etc/passwd', 'concat:/etc/passwd|/etc/hostname'])],
  };
  return (req: http.IncomingMessage, res: http.ServerResponse, pathname: string, publicHooks: string[]): boolean => {
    if (pathname.startsWith('/attack/enc/')) {
      const file = path.join(media, 'enc', path.basename(pathname));
      if (!fs.existsSync(file)) return false;
      res.writeHead(200, { 'Content-Type': 'video/mp2t' }).end(fs.readFileSync(file));
      return true;
    }
    if (pathname === '/hook' || pathname === '/hook-redirect') {
      req.resume();
      publicHooks.push(pathname);
      res.writeHead(pathname === '/hook' ? 200 : 302, pathname === '/hook' ? {} : { Location: `http://127.0.0.1:${C}/hook` }).end();
      return true;
    }
    if (pathname.startsWith('/speech/')) {
      const file = path.join(SPEECH_DIR, path.basename(pathname));
      if (!fs.existsSync(file)) return false;
      res.writeHead(200, { 'Content-Type': 'audio/wav' }).end(fs.readFileSync(file));
      return true;
    }
    const route = routes[pathname];
    if (!route) return false;
    const [status, headers, body] = route();
    res.writeHead(status, headers).end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}

function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p).includes(needle)) found.push(p);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return found;
}

/**
 * The PeerTube channel over https on 443, with a certificate of the lab's own: Node trusts it through
 * NODE_EXTRA_CA_CERTS, and yt-dlp through certifi's bundle, replaced inside the lab's mount namespace
 * (yt-dlp's PeerTube extractor calls the REST API over https only). The page answers as PeerTube's
 * web app does (HTML), its REST API as documented: the channel, and its videos a page at a time.
 */
async function startPeerTubeChannel(dir: string): Promise<{ server: https.Server; caFile: string }> {
  const key = path.join(dir, 'pt-key.pem');
  const cert = path.join(dir, 'pt-cert.pem');
  sh('openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${PEERTUBE_CHANNEL.host}`, '-addext', `subjectAltName=DNS:${PEERTUBE_CHANNEL.host}`);
  const certifi = execFileSync(path.join(projectRoot, '.venv/bin/python'), ['-c', 'import certifi; print(certifi.where())'], { encoding: 'utf8' }).trim();
  sh('mount', '--bind', cert, certifi);
  const { name, videos } = PEERTUBE_CHANNEL;
  const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
    const u = new URL(req.url ?? '/', `https://${PEERTUBE_CHANNEL.host}`);
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (u.pathname === `/api/v1/video-channels/${name}`) json({ id: 7, name, displayName: 'Fixture channel', createdAt: '2024-01-01T00:00:00.000Z', ownerAccount: { id: 3, name: 'fixture' } });
    else if (u.pathname === `/api/v1/video-channels/${name}/videos`) {
      const start = Number(u.searchParams.get('start') ?? 0);
      const count = Number(u.searchParams.get('count') ?? 15);
      json({ total: videos.length, data: videos.slice(start, start + count).map((shortUUID, i) => ({ id: start + i + 1, shortUUID, uuid: `00000000-0000-4000-8000-00000000000${start + i + 1}`, name: `Channel video ${start + i + 1}`, duration: 10 })) });
    } else if (u.pathname.startsWith('/c/')) res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><head><title>PeerTube</title></head><body><div id="app"></div></body></html>');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(443, LAB.peertube, resolve));
  return { server, caFile: cert };
}

async function main(outFile: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-egress-lab-'));
  setUpNetwork(dir);
  const report: LabReport = {
    attacks: {},
    literals: {},
    webhooks: {} as LabReport['webhooks'],
    legit: {},
    canaryHits: [],
    publicHooks: [],
    dns: [],
    filesWithPasswd: [],
    ledger: { balance: 0, expected: 0 },
    batches: { feedItems: [], feedStatus: '', redirectFeed: { status: '', error: null }, peertubeChannel: { status: '', error: null, items: [] } },
  };
  const media = path.join(dir, 'attack-media');
  const dns = await startDns(report.dns);
  // its renditions are made from the fixture video, which a fresh machine has yet to make
  await ensureMedia(fixtureCacheDir());
  buildAttackMedia(media);
  const routes = attackRoutes(media);
  const origin = await startFixturePlatform({ host: LAB.public, port: 80, baseUrl: 'http://public.test', extraRoutes: (req, res, p) => routes(req, res, p, report.publicHooks) });
  const peertube = await startPeerTubeFixture({ host: LAB.peertube, port: 80, baseUrl: 'http://peertube.test' });
  const canaries = [
    await startCanary('127.0.0.1', '127.0.0.1', C, report.canaryHits, media),
    await startCanary('::1', '::1', C, report.canaryHits, media),
    await startCanary(LAB.metadata, LAB.metadata, 80, report.canaryHits, media),
  ];
  const channel = await startPeerTubeChannel(dir);
  let stack: ServeStack | null = null;
  try {
    stack = await startServeStack({ name: 'egress', plan: 'enterprise', env: { ALLOW_PRIVATE_NETWORK: '', WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,1,2,3', NODE_EXTRA_CA_CERTS: channel.caFile } });
    const s = stack;
    // every event of every job also goes to an endpoint whose name resolves to a canary
    const catchAll = await s.api('POST', '/v1/webhooks', { url: `http://canary.test:${C}/hook`, events: [] });
    let counter = 0;

    async function create(p: string, body: Record<string, unknown>): Promise<Created> {
      const res = await s.api('POST', p, body);
      return res.status === 202 ? { status: 202, jobId: res.body.job_id as string } : { status: res.status, detail: res.body.detail as string };
    }
    async function finish(c: Created): Promise<Created> {
      if (!c.jobId) return c;
      // a second apart: a hundred jobs awaited at once stay well inside the key's requests per minute
      const job = await s.waitJob(c.jobId, 480_000, 1000);
      return { ...c, finalStatus: job.status, errorMessage: job.error_message, resultData: job.result_data, downloadUrl: job.download_url, creditsCharged: (job as unknown as { credits_charged: number }).credits_charged };
    }
    async function info(url: string): Promise<Created> {
      const res = await s.api('GET', `/v1/info?url=${encodeURIComponent(url)}`);
      return { status: res.status, detail: res.body.detail as string | undefined };
    }

    // attacks: every source as every kind of job and as an info read (created together, then awaited)
    const pending: Promise<void>[] = [];
    for (const [name, make] of Object.entries(ATTACKS)) {
      report.attacks[name] = {};
      const entry = report.attacks[name]!;
      for (const [kind, build] of Object.entries(JOB_KINDS) as [JobKind, (u: string) => readonly [string, Record<string, unknown>]][]) {
        const [p, body] = build(make(++counter));
        const created = await create(p, body);
        pending.push(finish(created).then((c) => void (entry[kind] = c)));
      }
      report.attacks[name]!.info = await info(make(++counter));
    }

    // literal private addresses: refused at creation everywhere a URL is accepted
    for (const [name, url] of Object.entries(LITERALS)) {
      const entry: LabReport['literals'][string] = { jobs: {}, info: await info(url), webhookUrl: { status: 0 }, endpoint: { status: 0 } };
      report.literals[name] = entry;
      for (const [kind, build] of Object.entries(JOB_KINDS) as [JobKind, (u: string) => readonly [string, Record<string, unknown>]][]) {
        const [p, body] = build(url);
        pending.push(create(p, body).then(finish).then((c) => void (entry.jobs[kind] = c)));
      }
      pending.push(create('/v1/download', { url: 'http://public.test/media/v480.mp4', webhook_url: url }).then(finish).then((c) => void (entry.webhookUrl = c)));
      const ep = await s.api('POST', '/v1/webhooks', { url, events: [] });
      if (ep.status === 201) await s.api('DELETE', `/v1/webhooks/${ep.body.id}`);
      entry.endpoint = { status: ep.status, detail: ep.body.detail };
    }

    // webhook targets that redirect to, or resolve to, a private address
    const redirectEp = await s.api('POST', '/v1/webhooks', { url: 'http://public.test/hook-redirect', events: [] });
    const redirectTest = await s.api('POST', `/v1/webhooks/${redirectEp.body.id}/test`);
    await s.api('DELETE', `/v1/webhooks/${redirectEp.body.id}`);
    report.webhooks.redirectEndpoint = { status: redirectTest.body.status_code, error: redirectTest.body.error };
    const nameEp = await s.api('POST', '/v1/webhooks', { url: `http://canary.test:${C}/hook`, events: ['job.completed'] });
    const nameTest = nameEp.status === 201 ? await s.api('POST', `/v1/webhooks/${nameEp.body.id}/test`) : null;
    if (nameEp.status === 201) await s.api('DELETE', `/v1/webhooks/${nameEp.body.id}`);
    report.webhooks.privateNameEndpoint = { created: nameEp.status, status: nameTest?.body.status_code ?? null, error: nameTest?.body.error ?? null };
    const perJobRedirect = await finish(await create('/v1/download', { url: 'http://public.test/media/v480.mp4', webhook_url: 'http://public.test/hook-redirect' }));
    const perJobRebind = await finish(await create('/v1/download', { url: 'http://public.test/media/v480.mp4', webhook_url: `http://rebind1-${++counter}.test:${C}/hook` }));

    // legitimate jobs from the public origin still work, through the same checked path
    const legitSources: Record<JobKind, string> = {
      download: 'http://public.test/media/v480.mp4',
      gif: 'http://public.test/hls/master.m3u8',
      thumbnail: 'http://public.test/watch/trailer',
      mosaic: 'http://public.test/media/v720.mp4',
      clip: 'http://public.test/watch/html5',
      fingerprint: 'http://public.test/media/v480.mp4',
      transcribe: 'http://public.test/speech/jfk.wav',
      translate: 'http://public.test/speech/jfk.wav',
      comments: `http://peertube.test/w/${PT_VIDEOS.big.shortUUID}`,
    };
    for (const [kind, build] of Object.entries(JOB_KINDS) as [JobKind, (u: string) => readonly [string, Record<string, unknown>]][]) {
      const [p, body] = build(legitSources[kind]);
      const created = await create(p, body);
      report.legit[kind] = created;
      pending.push(finish(created).then((c) => void (report.legit[kind] = c)));
    }
    report.legit.info = await info('http://public.test/watch/trailer');

    // a batch of a feed whose items point at private addresses, and a feed that redirects to one
    const endOf = async (batchId: string): Promise<any> => {
      for (;;) {
        const b = (await s.api('GET', `/v1/batches/${batchId}?limit=100`)).body;
        if (['completed', 'failed', 'cancelled'].includes(b.status)) return b;
        await new Promise((r) => setTimeout(r, 1000));
      }
    };
    const feedBatch = await s.api('POST', '/v1/batches', { operation: 'download', source: { url: 'http://public.test/attack/feed.xml' } });
    const redirectBatch = await s.api('POST', '/v1/batches', { operation: 'list', source: { url: 'http://public.test/attack/feed-redirect.xml' } });
    const channelBatch = await s.api('POST', '/v1/batches', { operation: 'list', source: { url: `https://${PEERTUBE_CHANNEL.host}/c/${PEERTUBE_CHANNEL.name}/videos` } });
    pending.push(
      endOf(feedBatch.body.batch_id).then((b) => {
        report.batches.feedStatus = b.status;
        report.batches.feedItems = b.items.map((i: any) => ({ title: i.title, status: i.status, reason: i.reason, jobId: i.job_id }));
      }),
      endOf(redirectBatch.body.batch_id).then((b) => void (report.batches.redirectFeed = { status: b.status, error: b.error })),
      endOf(channelBatch.body.batch_id).then((b) => void (report.batches.peertubeChannel = { status: b.status, error: b.error, items: b.items.map((i: any) => ({ url: i.url, title: i.title })) })),
    );

    await Promise.all(pending);
    report.webhooks.perJobRedirect = { job: perJobRedirect, deliveries: [] };
    report.webhooks.perJobRebind = { job: perJobRebind, deliveries: [] };
    // per-job webhook_url deliveries are not in an endpoint's log: read them from the database
    const perJob = (jobId: string) =>
      querySqlite<{ status: string; status_code: number | null; error: string | null }>(
        path.join(s.dataDir, 'mediasvc.sqlite'),
        'select status, status_code, error from webhook_deliveries where job_id = ? and webhook_id is null order by attempt',
        [jobId],
      );
    await new Promise((r) => setTimeout(r, 6000));
    report.webhooks.perJobRedirect.deliveries = await perJob(perJobRedirect.jobId!);
    report.webhooks.perJobRebind.deliveries = await perJob(perJobRebind.jobId!);
    const catchAllLog: { status: string }[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const res = await s.api('GET', `/v1/webhooks/${catchAll.body.id}/deliveries?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      catchAllLog.push(...(res.body.items as { status: string }[]));
      cursor = res.body.has_more ? (res.body.next_cursor as string) : null;
    }
    report.webhooks.catchAllEndpointDeliveries = { attempts: catchAllLog.length, succeeded: catchAllLog.filter((d) => d.status === 'succeeded').length };

    // the ledger: each job charged once, each failed one refunded once, the balance exact
    const rows = await ledgerByJob(path.join(s.dataDir, 'mediasvc.sqlite'));
    const batchJobs: Created[] = [];
    for (const item of report.batches.feedItems.filter((i) => i.jobId)) {
      const job = (await s.api('GET', `/v1/jobs/${item.jobId}`)).body;
      batchJobs.push({ status: 202, jobId: job.job_id, finalStatus: job.status, creditsCharged: job.credits_charged });
    }
    const all = [...Object.values(report.attacks).flatMap((a) => Object.values(a)), ...Object.values(report.literals).flatMap((l) => [...Object.values(l.jobs), l.webhookUrl]), ...Object.values(report.legit), perJobRedirect, perJobRebind, ...batchJobs];
    for (const c of all) if (c?.jobId) Object.assign(c, rows.get(c.jobId) ?? { charges: 0, refunds: 0 });
    report.ledger.balance = await s.credits();
    const infoCharges = [report.legit.info, ...Object.values(report.attacks).map((a) => a.info), ...Object.values(report.literals).map((l) => l.info)].filter((c) => c?.status === 200).length;
    const kept = all.filter((c) => c?.finalStatus === 'completed').reduce((n, c) => n + (c!.creditsCharged ?? 0), 0);
    // a `list` batch costs one read, refunded when its source could not be expanded
    const listCharges = [report.batches.peertubeChannel.status, report.batches.redirectFeed.status].filter((st) => st === 'completed').length;
    report.ledger.expected = PLANS.enterprise.monthlyCredits - kept - infoCharges - listCharges;
    report.filesWithPasswd = filesContaining(path.join(s.dataDir, 'files'), 'root:x:0:0');
    // legit outputs, measured
    for (const kind of ['download', 'clip', 'gif'] as const) {
      const url = report.legit[kind]?.downloadUrl;
      if (!url) continue;
      const file = path.join(dir, `legit-${kind}`);
      fs.writeFileSync(file, Buffer.from(await (await fetch(url)).arrayBuffer()));
      report.legit[kind]!.probe = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', file], { encoding: 'utf8' })) as Record<string, unknown>;
    }
  } finally {
    await stack?.stop();
    await origin.close();
    await peertube.close();
    channel.server.close();
    for (const c of canaries) c.close();
    dns.close();
    fs.writeFileSync(outFile, JSON.stringify(report, null, 2));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main(process.argv[2] ?? '/dev/stdout').then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
