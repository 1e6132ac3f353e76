import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { projectRoot } from '../../lib/config';

/** The shared real recordings with reference texts (read in place, never copied into the repo). */
export const SPEECH_DIR = path.join(projectRoot, '../shared/media/speech');
export const EXPECTED = JSON.parse(fs.readFileSync(path.join(SPEECH_DIR, 'expected.json'), 'utf8')) as Record<string, { language: string; text?: string; text_contains?: string }>;

const TYPES: Record<string, string> = { '.wav': 'audio/wav', '.flac': 'audio/flac', '.aiff': 'audio/aiff' };

export interface SpeechFiles {
  /** `http://127.0.0.1:PORT/{name}`: the recording, served whole. */
  url(name: string): string;
  /** A URL whose answer sends the headers and then stalls until close(): a job fetching it stays running. */
  stalledUrl(name: string): string;
  close(): Promise<void>;
}

/** Serves the shared speech recordings read-only over HTTP, as a platform would serve media; and the files of `extraDir`, if given. */
export function serveSpeechFiles(extraDir?: string): Promise<SpeechFiles> {
  const server = http.createServer((req, res) => {
    const urlPath = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    const name = path.basename(urlPath);
    const file = extraDir && fs.existsSync(path.join(extraDir, name)) ? path.join(extraDir, name) : path.join(SPEECH_DIR, name);
    if (!TYPES[path.extname(name)] || !fs.existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(name)]!, 'content-length': fs.statSync(file).size });
    if (req.method === 'HEAD') res.end();
    else if (urlPath.startsWith('/stalled/')) res.flushHeaders();
    else fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: (name) => `http://127.0.0.1:${port}/${name}`,
        stalledUrl: (name) => `http://127.0.0.1:${port}/stalled/${name}`,
        close: () =>
          new Promise((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    }),
  );
}
