// An HTTP proxy on loopback that answers every plain-http request itself, whatever host it names:
// handed to yt-dlp as its --proxy (as the egress proxy is), it makes made-up names (public.test,
// pt.public.test, www.youtube.com over --prefer-insecure) origins of the test's own, with no DNS,
// hosts file or namespace. It notes each request's host, path and Cookie header; CONNECT (https) is
// refused, so nothing leaves the machine.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  host: string;
  path: string;
  cookie: string | null;
}

export interface NamesProxy {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** `route` answers a request for `host` and `path` (the query included); false: 404. */
export async function startNamesProxy(route: (host: string, path: string, req: http.IncomingMessage, res: http.ServerResponse) => boolean): Promise<NamesProxy> {
  const seen: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '', `http://${req.headers.host ?? 'unknown'}`);
    } catch {
      return void res.writeHead(400).end();
    }
    seen.push({ host: target.hostname, path: target.pathname + target.search, cookie: req.headers.cookie ?? null });
    if (!route(target.hostname, target.pathname + target.search, req, res)) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  server.on('connect', (_req, socket) => socket.end('HTTP/1.1 403 Forbidden\r\n\r\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
