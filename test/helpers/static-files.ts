// A read-only HTTP server over a folder of recordings, as a platform would serve media.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const TYPES: Record<string, string> = { '.wav': 'audio/wav', '.flac': 'audio/flac', '.aiff': 'audio/aiff' };

/** Serves the audio files of `dir` (wav, flac, aiff) read-only on 127.0.0.1. */
export function serveDir(dir: string): Promise<{ url: (name: string) => string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const name = path.basename(decodeURIComponent((req.url ?? '/').split('?')[0]!));
    const file = path.join(dir, name);
    if (!TYPES[path.extname(name)] || !fs.existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(name)]!, 'content-length': fs.statSync(file).size });
    if (req.method === 'HEAD') res.end();
    else fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: (name) => `http://127.0.0.1:${port}/${name}`, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}
