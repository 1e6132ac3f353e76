// Outbound proxies for tests, as an operator's would be: an HTTP CONNECT proxy and a SOCKS5 proxy,
// each with optional credentials. They count the tunnels they open and record each target, and
// connect out from 127.0.0.2, so an origin on loopback can tell a proxied connection from a direct one.
import http from 'node:http';
import net from 'node:net';

export const PROXIED_FROM = '127.0.0.2';

export interface CountingProxy {
  url: string;
  /** Every tunnel asked for, in order: "address:port", and whether it was allowed. */
  tunnels: { target: string; allowed: boolean }[];
  close(): Promise<void>;
}

/** "user:password" as a URL's userinfo. */
function userinfo(auth?: string): string {
  if (!auth) return '';
  const i = auth.indexOf(':');
  return `${encodeURIComponent(auth.slice(0, i))}:${encodeURIComponent(auth.slice(i + 1))}@`;
}

function connectOut(host: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, localAddress: PROXIED_FROM });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as net.AddressInfo).port;
}

/** An HTTP proxy that only tunnels (CONNECT), as the service asks of one; `auth` is "user:password". */
export async function startConnectProxy(auth?: string): Promise<CountingProxy> {
  const tunnels: CountingProxy['tunnels'] = [];
  const server = http.createServer((_req, res) => res.writeHead(405).end('CONNECT only'));
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => undefined);
    const given = /^Basic (.+)$/.exec(req.headers['proxy-authorization'] ?? '')?.[1];
    const allowed = !auth || (given !== undefined && Buffer.from(given, 'base64').toString() === auth);
    tunnels.push({ target: req.url ?? '', allowed });
    if (!allowed) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? '');
    connectOut(m![1]!, Number(m![2])).then(
      (up) => {
        up.on('error', () => client.destroy());
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) up.write(head);
        up.pipe(client);
        client.pipe(up);
      },
      () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'),
    );
  });
  const port = await listen(server);
  return {
    url: `http://${userinfo(auth)}127.0.0.1:${port}`,
    tunnels,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A SOCKS5 proxy (RFC 1928, CONNECT only; RFC 1929 credentials when `auth` is "user:password"). */
export async function startSocksProxy(auth?: string): Promise<CountingProxy> {
  const tunnels: CountingProxy['tunnels'] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'auth' | 'request' | 'open' = 'greeting';
    let allowed = !auth;
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (stage === 'greeting') {
          if (buf.length < 2 || buf.length < 2 + buf[1]!) return;
          const methods = [...buf.subarray(2, 2 + buf[1]!)];
          buf = buf.subarray(2 + buf[1]!);
          const method = auth ? (methods.includes(2) ? 2 : 0xff) : 0;
          client.write(Buffer.from([5, method]));
          if (method === 0xff) return void client.end();
          stage = auth ? 'auth' : 'request';
        } else if (stage === 'auth') {
          if (buf.length < 2) return;
          const ulen = buf[1]!;
          if (buf.length < 3 + ulen || buf.length < 3 + ulen + buf[2 + ulen]!) return;
          const plen = buf[2 + ulen]!;
          const given = `${buf.subarray(2, 2 + ulen).toString()}:${buf.subarray(3 + ulen, 3 + ulen + plen).toString()}`;
          buf = buf.subarray(3 + ulen + plen);
          allowed = given === auth;
          client.write(Buffer.from([1, allowed ? 0 : 1]));
          if (!allowed) return void client.end();
          stage = 'request';
        } else if (stage === 'request') {
          if (buf.length < 5) return;
          const len = buf[3] === 1 ? 4 : buf[3] === 4 ? 16 : 1 + buf[4]!;
          if (buf.length < 4 + len + 2) return;
          const raw = buf.subarray(4, 4 + len);
          const host = buf[3] === 1 ? [...raw].join('.') : buf[3] === 4 ? net.isIPv6(ipv6(raw)) ? ipv6(raw) : '' : raw.subarray(1).toString();
          const port = buf.readUInt16BE(4 + len);
          const rest = buf.subarray(4 + len + 2);
          stage = 'open';
          client.off('data', onData);
          client.pause();
          tunnels.push({ target: `${host}:${port}`, allowed });
          connectOut(host, port).then(
            (up) => {
              up.on('error', () => client.destroy());
              client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 2, 0, 0]));
              if (rest.length) up.write(rest);
              up.pipe(client);
              client.pipe(up);
              client.resume();
            },
            () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])),
          );
          return;
        } else return;
      }
    };
    client.on('data', onData);
  });
  const port = await listen(server);
  return {
    url: `socks5://${userinfo(auth)}127.0.0.1:${port}`,
    tunnels,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

function ipv6(raw: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(raw.readUInt16BE(i).toString(16));
  return groups.join(':');
}
