// Source traffic through an operator's outbound proxy (SOURCE_PROXY_URL and per-site overrides):
// http:// and https:// proxies by CONNECT, socks5:// by RFC 1928 with RFC 1929 credentials. The
// proxy is asked for the address this process has already checked (resolveAllowed), never for the
// name, so its own DNS cannot lead a source anywhere the address policy forbids.
import net from 'node:net';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import { siteOf, type SourceProxySettings } from '../../lib/source-sites';

/** Where source connections to a host go: straight out, or through a proxy. */
export interface SourceRoutes {
  /** The proxy for connections to `host`, or null for a direct connection. */
  proxyFor(host: string): URL | null;
}

export const DIRECT: SourceRoutes = { proxyFor: () => null };

/** Routes from the configured proxies: a host takes its site's override, else the default. */
export function sourceRoutes(settings: SourceProxySettings): SourceRoutes {
  const sites = new Map(Object.entries(settings.bySite).map(([site, href]) => [site, href ? new URL(href) : null]));
  const fallback = settings.default ? new URL(settings.default) : null;
  if (!fallback && sites.size === 0) return DIRECT;
  return {
    proxyFor(host: string): URL | null {
      const site = siteOf(host, sites);
      return site ? sites.get(site)! : fallback;
    },
  };
}

let processRoutes: SourceRoutes = DIRECT;

/** This process's source routes, for its Node-side source fetches (the worker sets them at start). */
export function useSourceRoutes(routes: SourceRoutes): void {
  processRoutes = routes;
}

export function currentSourceRoutes(): SourceRoutes {
  return processRoutes;
}

const HANDSHAKE_TIMEOUT_MS = 20_000;

/**
 * A socket tunnelled through `proxy` to `address:port` (an address already checked), ready for the
 * bytes of the connection itself; anything the proxy sent past its answer is unread on it.
 */
export async function tunnelThrough(proxy: URL, address: string, port: number): Promise<net.Socket> {
  const proxyPort = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : proxy.protocol === 'http:' ? 80 : 1080));
  const host = proxy.hostname.replace(/^\[|\]$/g, '');
  const socket: net.Socket = await new Promise((resolve, reject) => {
    const s = proxy.protocol === 'https:' ? tls.connect({ host, port: proxyPort, servername: net.isIP(host) ? undefined : host }) : net.connect({ host, port: proxyPort });
    s.once(proxy.protocol === 'https:' ? 'secureConnect' : 'connect', () => resolve(s));
    s.once('error', reject);
  });
  const timer = setTimeout(() => socket.destroy(new Error(`the source proxy ${proxy.hostname} did not answer within ${HANDSHAKE_TIMEOUT_MS / 1000} s`)), HANDSHAKE_TIMEOUT_MS);
  try {
    const reader = new HandshakeReader(socket);
    if (proxy.protocol === 'socks5:' || proxy.protocol === 'socks5h:') await socks5Connect(socket, reader, proxy, address, port);
    else await httpConnect(socket, reader, proxy, address, port);
    reader.done();
    return socket;
  } catch (err) {
    socket.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a proxy's handshake answers from a socket; what follows them is put back for the tunnel's reader. */
class HandshakeReader {
  private buffered = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  private failure: Error | null = null;
  private readonly onData = (chunk: Buffer) => {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    this.wake?.();
  };
  private readonly onEnd = (err?: Error) => {
    this.failure ??= err ?? new Error('the source proxy closed the connection during its handshake');
    this.wake?.();
  };

  private readonly onClose = () => this.onEnd();

  constructor(private readonly socket: net.Socket) {
    socket.on('data', this.onData);
    socket.on('error', this.onEnd);
    socket.on('close', this.onClose);
  }

  /** Waits until `ready` finds what it needs in the bytes so far; returns how many bytes it took. */
  async read(ready: (bytes: Buffer) => number): Promise<Buffer> {
    for (;;) {
      const n = ready(this.buffered);
      if (n > 0) {
        const taken = this.buffered.subarray(0, n);
        this.buffered = this.buffered.subarray(n);
        return taken;
      }
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }

  done(): void {
    this.socket.off('data', this.onData);
    this.socket.off('error', this.onEnd);
    this.socket.off('close', this.onClose);
    this.socket.pause();
    if (this.buffered.length) this.socket.unshift(this.buffered);
  }
}

async function httpConnect(socket: net.Socket, reader: HandshakeReader, proxy: URL, address: string, port: number): Promise<void> {
  const target = net.isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
  const auth = proxy.username ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}\r\n` : '';
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
  const head = (await reader.read((b) => {
    const end = b.indexOf('\r\n\r\n');
    if (end < 0 && b.length > 16 * 1024) throw new Error('the source proxy sent an answer head over 16 KB');
    return end < 0 ? 0 : end + 4;
  })).toString('latin1');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
  if (status !== '200') throw new Error(`the source proxy ${proxy.hostname} answered CONNECT with ${status ?? 'no status'}${status === '407' ? ' (its credentials were refused)' : ''}`);
}

const SOCKS_REPLIES: Record<number, string> = {
  1: 'general failure',
  2: 'connection not allowed by its rules',
  3: 'network unreachable',
  4: 'host unreachable',
  5: 'connection refused',
  6: 'TTL expired',
  7: 'command not supported',
  8: 'address type not supported',
};

async function socks5Connect(socket: net.Socket, reader: HandshakeReader, proxy: URL, address: string, port: number): Promise<void> {
  const withPassword = proxy.username !== '';
  socket.write(Buffer.from(withPassword ? [5, 2, 0, 2] : [5, 1, 0]));
  const [, method] = await reader.read((b) => (b.length >= 2 ? 2 : 0));
  if (method === 2 && withPassword) {
    const user = Buffer.from(decodeURIComponent(proxy.username));
    const pass = Buffer.from(decodeURIComponent(proxy.password));
    socket.write(Buffer.concat([Buffer.from([1, user.length]), user, Buffer.from([pass.length]), pass]));
    const [, ok] = await reader.read((b) => (b.length >= 2 ? 2 : 0));
    if (ok !== 0) throw new Error(`the source proxy ${proxy.hostname} refused its credentials`);
  } else if (method !== 0) {
    throw new Error(`the source proxy ${proxy.hostname} offers no authentication method this service speaks`);
  }
  // ATYP 1 (IPv4) or 4 (IPv6), then the address's bytes
  const addr = Buffer.from([net.isIP(address) === 4 ? 1 : 4, ...ipaddr.parse(address).toByteArray()]);
  const portBytes = Buffer.from([port >> 8, port & 0xff]);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), addr, portBytes]));
  const reply = await reader.read((b) => {
    if (b.length < 5) return 0;
    const len = b[3] === 1 ? 4 : b[3] === 4 ? 16 : b[3] === 3 ? 1 + b[4]! : -1;
    if (len < 0) throw new Error('the source proxy sent a malformed SOCKS reply');
    return b.length >= 4 + len + 2 ? 4 + len + 2 : 0;
  });
  if (reply[1] !== 0) throw new Error(`the source proxy ${proxy.hostname} could not connect: ${SOCKS_REPLIES[reply[1]!] ?? `SOCKS error ${reply[1]}`}`);
}
