// Source traffic as platforms and operators meet it: through an outbound proxy (HTTP CONNECT or
// SOCKS5, with credentials) after the address check, never for webhooks, and no more steps at once
// per platform than PLATFORM_CONCURRENCY allows. Real sockets on loopback; the proxies are the
// test's own and count what they are asked for.
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { EgressRefusedError } from '../engines/egress/address-check';
import { startEgressProxy, type EgressProxy } from '../engines/egress/egress-proxy';
import { egressRequest, readBody } from '../engines/egress/http-client';
import { PlatformGate } from '../engines/egress/platform-gate';
import { DIRECT, sourceRoutes, tunnelThrough, useSourceRoutes } from '../engines/egress/upstream-proxy';
import { loadConfig } from '../lib/config';
import { parsePlatformConcurrency, redactedProxy, siteKey } from '../lib/source-sites';
import { PROXIED_FROM, startConnectProxy, startSocksProxy, type CountingProxy } from './helpers/counting-proxy';

interface Origin {
  port: number;
  /** The peer address of each request, in order. */
  peers: string[];
  /** Requests in flight now, and the most at once. */
  active: number;
  peak: number;
  close(): Promise<void>;
}

/** An origin that answers after `delayMs`, noting who connected and how many requests were in flight at once. */
async function startOrigin(delayMs = 0): Promise<Origin> {
  const o: Origin = { port: 0, peers: [], active: 0, peak: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    o.peers.push((req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''));
    o.active++;
    o.peak = Math.max(o.peak, o.active);
    setTimeout(() => {
      o.active--;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from ${req.url}`);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  o.port = (server.address() as net.AddressInfo).port;
  o.close = () => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return o;
}

/** A GET through the egress proxy in forward-proxy form, as yt-dlp sends one for an http:// URL. */
function getThrough(proxyUrl: string, target: string): Promise<{ status: number; body: string }> {
  const p = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: p.hostname, port: Number(p.port), path: target, headers: { 'proxy-authorization': `Basic ${Buffer.from(`${decodeURIComponent(p.username)}:${decodeURIComponent(p.password)}`).toString('base64')}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('platforms: source traffic through an outbound proxy, and per-platform concurrency', function () {
  this.timeout(60_000);
  let origin: Origin;
  const proxies: CountingProxy[] = [];
  const egresses: EgressProxy[] = [];

  before(async () => {
    origin = await startOrigin();
  });
  after(async () => {
    useSourceRoutes(DIRECT);
    for (const e of egresses) await e.close();
    for (const p of proxies) await p.close();
    await origin.close();
  });
  async function proxy(kind: 'connect' | 'socks', auth?: string): Promise<CountingProxy> {
    const p = kind === 'connect' ? await startConnectProxy(auth) : await startSocksProxy(auth);
    proxies.push(p);
    return p;
  }
  async function egress(opts: Parameters<typeof startEgressProxy>[0]): Promise<EgressProxy> {
    const e = await startEgressProxy(opts);
    egresses.push(e);
    return e;
  }

  for (const kind of ['connect', 'socks'] as const) {
    it(`the egress proxy checks each destination, then tunnels it through a ${kind === 'connect' ? 'HTTP CONNECT' : 'SOCKS5'} proxy with credentials, asked for the checked address`, async () => {
      const up = await proxy(kind, 'media:p@ss w%rd');
      const e = await egress({ allowPrivate: true, routes: sourceRoutes({ default: up.url, bySite: {} }) });
      const before = origin.peers.length;
      const res = await getThrough(e.urlFor('t1'), `http://localhost:${origin.port}/video.mp4`);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.body, 'hello from /video.mp4');
      assert.deepEqual(origin.peers.slice(before), [PROXIED_FROM], 'the origin was reached from the proxy');
      assert.equal(up.tunnels.length, 1);
      // the name was resolved and checked here; the proxy was given its address, not the name
      assert.match(up.tunnels[0]!.target, new RegExp(`^(127\\.0\\.0\\.1|::1|\\[::1\\]):${origin.port}$`));
      assert.equal(up.tunnels[0]!.allowed, true, 'the credentials were accepted');
    });
  }

  it('a destination the address policy forbids is refused before the upstream proxy is asked', async () => {
    const up = await proxy('connect');
    const e = await egress({ allowPrivate: false, routes: sourceRoutes({ default: up.url, bySite: {} }) });
    const res = await getThrough(e.urlFor('t2'), `http://127.0.0.1:${origin.port}/private.mp4`);
    assert.equal(res.status, 403, res.body);
    assert.equal(e.refusals('t2')[0]?.address, '127.0.0.1');
    assert.deepEqual(up.tunnels, [], 'the upstream proxy was never asked');
  });

  it('wrong proxy credentials fail the connection with a sentence that names the proxy, never its password', async () => {
    const up = await proxy('connect', 'media:right');
    const wrong = new URL(up.url);
    wrong.password = 'wrong';
    await assert.rejects(tunnelThrough(wrong, '127.0.0.1', origin.port), (err: Error) => /credentials were refused/.test(err.message) && !err.message.includes('wrong'));
    const socks = await proxy('socks', 'media:right');
    const wrongSocks = new URL(socks.url);
    wrongSocks.password = 'wrong';
    await assert.rejects(tunnelThrough(wrongSocks, '127.0.0.1', origin.port), /refused its credentials/);
  });

  it("Node-side source fetches go through the site's proxy; webhooks, and a site set to direct, go straight out", async () => {
    const up = await proxy('connect');
    useSourceRoutes(sourceRoutes({ default: up.url, bySite: { [siteKey('localhost')]: null } }));
    const fetchOnce = async (host: string, traffic: 'source' | 'webhook') => {
      const res = await egressRequest({ url: `http://${host}:${origin.port}/${traffic}`, method: 'GET', timeoutMs: 10_000, allowPrivate: true, traffic });
      assert.equal(res.statusCode, 200);
      await readBody(res);
      return origin.peers[origin.peers.length - 1];
    };
    assert.equal(await fetchOnce('127.0.0.1', 'source'), PROXIED_FROM);
    assert.equal(await fetchOnce('127.0.0.1', 'webhook'), '127.0.0.1');
    assert.equal(await fetchOnce('localhost', 'source'), '127.0.0.1');
    assert.equal(up.tunnels.length, 1, JSON.stringify(up.tunnels));
    // the address check still comes first for a proxied Node-side fetch
    await assert.rejects(egressRequest({ url: `http://127.0.0.1:${origin.port}/x`, method: 'GET', timeoutMs: 10_000, allowPrivate: false, traffic: 'source' }), EgressRefusedError);
    assert.equal(up.tunnels.length, 1);
    useSourceRoutes(DIRECT);
  });

  it('configuration: proxies per site and "direct", a bad URL is a readable error, and the password never shows', () => {
    const c = loadConfig({ SOURCE_PROXY_URL: 'socks5://u:p%40ss@proxy.internal:1080', SOURCE_PROXY_URL__youtube_com: 'http://yt.proxy:3128', SOURCE_PROXY_URL__vimeo_com: 'direct', PLATFORM_CONCURRENCY: 'youtube.com=4,default=16' });
    const routes = sourceRoutes(c.sourceProxy);
    assert.equal(routes.proxyFor('www.youtube.com')?.host, 'yt.proxy:3128');
    assert.equal(routes.proxyFor('vimeo.com'), null);
    assert.equal(routes.proxyFor('example.org')?.protocol, 'socks5:');
    assert.equal(redactedProxy(c.sourceProxy.default!), 'socks5://u:***@proxy.internal:1080');
    assert.deepEqual(c.platformConcurrency, { default: 16, bySite: { youtube_com: 4 } });
    assert.throws(() => loadConfig({ SOURCE_PROXY_URL: 'ftp://proxy:21' }), /SOURCE_PROXY_URL: a source proxy is http:\/\/, https:\/\/ or socks5:\/\//);
    assert.throws(() => loadConfig({ PLATFORM_CONCURRENCY: 'youtube.com=lots' }), /"youtube.com=lots" is not SITE=N/);
    assert.throws(() => parsePlatformConcurrency('youtube.com=0'), /not SITE=N/);
  });

  it('PLATFORM_CONCURRENCY: steps beyond the cap wait (never fail), the platform never sees more than the cap, and a nested fetch reuses its turn', async () => {
    const slow = await startOrigin(300);
    try {
      const gate = new PlatformGate({ default: null, bySite: { [siteKey('127.0.0.1')]: 2 } });
      const url = `http://127.0.0.1:${slow.port}/media.mp4`;
      const fetchIt = async () => {
        const res = await egressRequest({ url, method: 'GET', timeoutMs: 10_000, allowPrivate: true, traffic: 'source' });
        return readBody(res);
      };
      // each step fetches twice, the second inside its own turn (a probe inside a download)
      const bodies = await Promise.all(Array.from({ length: 7 }, () => gate.hold(url, async () => [await fetchIt(), await gate.hold(url, fetchIt)])));
      assert.equal(bodies.flat().length, 14);
      assert.equal(slow.peak, 2, `the platform saw ${slow.peak} requests at once`);
      assert.deepEqual(gate.snapshot()[siteKey('127.0.0.1')], { running: 0, waiting: 0, peak: 2 });
      // another host is not capped by this site's cap
      assert.equal(gate.platformOf(`http://localhost:${slow.port}/`).cap, null);
      // a step cancelled while it waits leaves the queue and takes no turn
      const holding = gate.hold(url, () => new Promise((r) => setTimeout(r, 300)));
      const holding2 = gate.hold(url, () => new Promise((r) => setTimeout(r, 300)));
      const abort = new AbortController();
      const waiting = gate.hold(url, async () => 'ran', abort.signal);
      abort.abort(new Error('cancelled'));
      await assert.rejects(waiting, /cancelled/);
      await Promise.all([holding, holding2]);
      assert.deepEqual(gate.snapshot()[siteKey('127.0.0.1')], { running: 0, waiting: 0, peak: 2 });
    } finally {
      await slow.close();
    }
  });
});
