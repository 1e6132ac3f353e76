import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When the request arrived (ms since the epoch). */
  at: number;
}

export interface Receiver {
  url(path?: string): string;
  received: Received[];
  /** Status codes to answer, in order, per path; when a list runs out the last code repeats (default 200). */
  script(path: string, codes: number[]): void;
  /** Answers requests to this path only after `ms`, like a slow endpoint. */
  delay(path: string, ms: number): void;
  close(): Promise<void>;
}

/** A local webhook target that records every request exactly as it arrived. */
export async function startReceiver(host = '127.0.0.1'): Promise<Receiver> {
  const received: Received[] = [];
  const scripts = new Map<string, number[]>();
  const delays = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const codes = scripts.get(path) ?? [200];
      const code = codes.length > 1 ? codes.shift()! : codes[0]!;
      setTimeout(() => {
        res.writeHead(code, code >= 300 && code < 400 ? { Location: 'http://127.0.0.1:1/elsewhere' } : {});
        res.end();
      }, delays.get(path) ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = '/hook') => `http://${host}:${port}${path}`,
    received,
    script: (path, codes) => scripts.set(path, [...codes]),
    delay: (path, ms) => delays.set(path, ms),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
