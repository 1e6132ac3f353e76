// The egress proxy: every connection yt-dlp and ffmpeg make for a job goes through it. It runs in
// the worker process on 127.0.0.1 (random port, per-process secret), resolves each name itself,
// checks the address it connects to (resolveAllowed) and refuses anything that is not public —
// redirects, playlist segments, keys and manifests included, since each is a new request here.
// Each tool run gets its own proxy user, so a refusal is attributed to the job that caused it.
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { EgressRefusedError, resolveAllowed } from './address-check';
import { relayInto, type Relay } from './relay';
import { DIRECT, tunnelThrough, type SourceRoutes } from './upstream-proxy';

export interface EgressProxy {
  /** The proxy URL for one tool run (`http://run-…:secret@127.0.0.1:port`), for yt-dlp --proxy and ffmpeg -http_proxy. */
  urlFor(runId: string): string;
  /** Connections refused for a run so far (the first one explains the failure). */
  refusals(runId: string): EgressRefusedError[];
  /** Hosts a run could not reach (no DNS answer, connection refused): why a tool saw only a "502 from the proxy". */
  unreachable(runId: string): UnreachableHost[];
  /** Forgets a finished run. */
  release(runId: string): void;
  close(): Promise<void>;
}

export interface UnreachableHost {
  host: string;
  /** The resolver's or socket's error code (ENOTFOUND, ECONNREFUSED, …). */
  code: string;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** `routes`: the operator's source proxies; a connection is checked here first, then tunnelled through its host's proxy. */
export async function startEgressProxy(opts: { allowPrivate: boolean; routes?: SourceRoutes; log?: (msg: string) => void }): Promise<EgressProxy> {
  const routes = opts.routes ?? DIRECT;
  const secret = crypto.randomBytes(18).toString('base64url');
  const refused = new Map<string, EgressRefusedError[]>();
  const failed = new Map<string, UnreachableHost[]>();
  const log = opts.log ?? (() => undefined);

  /** The run named by a valid Proxy-Authorization, or null (wrong or missing secret). */
  function runOf(req: http.IncomingMessage): string | null {
    const m = /^Basic\s+(\S+)$/i.exec(req.headers['proxy-authorization'] ?? '');
    if (!m) return null;
    const [user = '', pass = ''] = Buffer.from(m[1]!, 'base64').toString('utf8').split(':');
    const given = Buffer.from(pass);
    const want = Buffer.from(secret);
    if (!user.startsWith('run-') || given.length !== want.length || !crypto.timingSafeEqual(given, want)) return null;
    return user.slice(4);
  }

  function refuse(run: string, err: EgressRefusedError): void {
    const list = refused.get(run) ?? [];
    list.push(err);
    refused.set(run, list);
    log(`egress refused for run ${run}: ${err.host} → ${err.address} (${err.reason})`);
  }

  function unreachable(run: string, host: string, err: NodeJS.ErrnoException): void {
    const list = failed.get(run) ?? [];
    list.push({ host, code: err.code ?? 'ERROR' });
    failed.set(run, list);
  }

  /**
   * Resolves and checks; the socket connects to exactly the address that was checked, straight or
   * through the host's source proxy. With `relay`, the origin's bytes start flowing into it.
   */
  async function connectChecked(run: string, host: string, port: number, relay?: Relay): Promise<net.Socket> {
    let target;
    try {
      [target] = await resolveAllowed(host, opts.allowPrivate);
    } catch (err) {
      if (err instanceof EgressRefusedError) refuse(run, err);
      else unreachable(run, host, err as NodeJS.ErrnoException);
      throw err;
    }
    const proxy = routes.proxyFor(host);
    if (proxy) {
      try {
        const socket = await tunnelThrough(proxy, target!.address, port);
        relay?.attachFlowing(socket);
        return socket;
      } catch (err) {
        unreachable(run, host, err as NodeJS.ErrnoException);
        throw err;
      }
    }
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: target!.address, port, family: target!.family, onread: relay?.onread });
      socket.once('connect', () => {
        relay?.attach(socket);
        resolve(socket);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => {
        unreachable(run, host, err);
        reject(err);
      });
    });
  }

  const server = http.createServer((req, res) => {
    // Forward proxy for plain http: the request line carries the absolute URL.
    const run = runOf(req);
    if (run === null) {
      res.writeHead(407, { 'Proxy-Authenticate': 'Basic realm="mediasvc-egress"' }).end();
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400).end('only http:// is forwarded; https goes through CONNECT');
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || 80);
    const refusal = (err: Error) => {
      const refusedHere = err instanceof EgressRefusedError;
      res.writeHead(refusedHere ? 403 : 502, { 'X-Egress-Refused': refusedHere ? err.address : '' }).end(refusedHere ? err.message : `could not connect: ${err.message}`);
    };
    // what tools fetch media with: the request is written here, the response relayed as it comes
    if ((req.method === 'GET' || req.method === 'HEAD') && req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      const relay = relayInto(req.socket, { httpResponse: true });
      connectChecked(run, host, port, relay).then((socket) => {
        if (req.socket.destroyed) return void socket.destroy();
        socket.write(requestHead(req.method!, url, req.rawHeaders));
      }, refusal);
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k.toLowerCase())) headers[k] = v;
    headers.host = url.host;
    headers.connection = 'close';
    connectChecked(run, host, port).then(
      (socket) => {
        const upstream = http.request({ createConnection: () => socket, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false }, (up) => {
          const out: http.OutgoingHttpHeaders = {};
          for (const [k, v] of Object.entries(up.headers)) if (!HOP_BY_HOP.has(k.toLowerCase())) out[k] = v;
          res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
          up.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        // a client that hangs up (ffmpeg done with its seek) ends the upstream fetch too
        res.on('close', () => {
          upstream.destroy();
          socket.destroy();
        });
        req.pipe(upstream);
      },
      refusal,
    );
  });

  // CONNECT host:port for https: the tunnel goes to the checked address; TLS stays end to end.
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => undefined);
    const run = runOf(req);
    if (run === null) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="mediasvc-egress"\r\n\r\n');
      return;
    }
    const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(req.url ?? '');
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const relay = relayInto(client);
    // either side closing closes the tunnel: nothing is fetched for a client that has gone
    connectChecked(run, m[1]!, Number(m[2]), relay).then(
      (upstream) => {
        if (client.destroyed) return void upstream.destroy();
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        client.pipe(upstream);
      },
      (err: Error) => client.end(`HTTP/1.1 ${err instanceof EgressRefusedError ? '403 Forbidden' : '502 Bad Gateway'}\r\n\r\n`),
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  server.unref();

  return {
    urlFor: (runId) => `http://run-${runId}:${secret}@127.0.0.1:${port}`,
    refusals: (runId) => refused.get(runId) ?? [],
    unreachable: (runId) => failed.get(runId) ?? [],
    release: (runId) => {
      refused.delete(runId);
      failed.delete(runId);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let shared: Promise<EgressProxy> | null = null;

/** The worker process's one egress proxy, started on first use. */
export function processEgressProxy(opts: { allowPrivate: boolean; routes?: SourceRoutes; log?: (msg: string) => void }): Promise<EgressProxy> {
  shared ??= startEgressProxy(opts);
  return shared;
}

/** A forwarded request's head: the client's headers but those of its connection to us, for one request on a connection of its own. */
function requestHead(method: string, url: URL, rawHeaders: string[]): string {
  const lines = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (!HOP_BY_HOP.has(name.toLowerCase()) && name.toLowerCase() !== 'host') lines.push(`${name}: ${rawHeaders[i + 1]!}`);
  }
  return [...lines, 'Connection: close', '', ''].join('\r\n');
}
