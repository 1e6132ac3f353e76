// A podcast host on loopback: feeds of any length (RSS, with guids, dates, iTunes durations and audio
// enclosures; `/slow-feed/` answers after seconds), an entity bomb, a page with several videos, episodes that 404 or never finish.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FeedOrigin {
  url(path: string): string;
  /** Requests seen, by path (query included). */
  hits: string[];
  /** Episodes the feed at `/feed/{name}.xml` lists (newest first); changing it changes what the next read sees. */
  episodes: Map<string, Episode[]>;
  close(): Promise<void>;
}

export interface Episode {
  guid: string;
  title: string;
  published: Date;
  /** The enclosure's path on this origin. */
  path: string;
  seconds: number;
}

/** `count` episodes, one a day from `first`, the newest first; each enclosure under `prefix`. */
export function dailyEpisodes(count: number, first: Date, prefix = '/ep'): Episode[] {
  return Array.from({ length: count }, (_, i) => ({
    guid: `urn:episode:${i + 1}`,
    title: `Episode ${i + 1}`,
    published: new Date(first.getTime() + i * 86_400_000),
    path: `${prefix}/${i + 1}.wav`,
    seconds: 3,
  })).reverse();
}

function rss(base: string, title: string, episodes: Episode[]): string {
  const items = episodes
    .map(
      (e) => `<item><title>${e.title} &amp; friends</title><guid isPermaLink="false">${e.guid}</guid><pubDate>${e.published.toUTCString()}</pubDate>` +
        `<enclosure url="${base}${e.path}" length="96044" type="audio/wav"/><itunes:duration>00:00:0${e.seconds}</itunes:duration></item>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>${title}</title>\n${items}\n</channel></rss>`;
}

const BOMB = `<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<rss version="2.0"><channel><title>&lol9;</title><item><title>&lol9;</title><enclosure url="http://127.0.0.1/a.wav"/></item></channel></rss>`;

/** How long `/slow-feed/…` takes to answer. */
export const SLOW_FEED_MS = 6_000;

/** Serves `audio` (a WAV file) for every episode path; `/missing/…` paths 404, `/refusing/…` ones 429, and `/stall/…` ones send headers and a trickle, never the end. */
export async function startFeedOrigin(audio: string): Promise<FeedOrigin> {
  const hits: string[] = [];
  const episodes = new Map<string, Episode[]>();
  const wav = fs.readFileSync(audio);
  const stalled = new Set<http.ServerResponse>();
  let base = '';
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push(path);
    const feed = /^\/(feed|slow-feed|chunked-feed)\/([a-z0-9-]+)\.xml$/.exec(path);
    if (feed && feed[1] === 'chunked-feed' && episodes.has(feed[2]!)) {
      // as some hosts serve it: a wrong content type, no length, the body in pieces a byte range apart
      const body = Buffer.from(rss(base, `Feed ${feed[2]}`, episodes.get(feed[2]!)!));
      res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' });
      for (let i = 0; i < body.length; i += 97) res.write(body.subarray(i, i + 97));
      res.end();
    } else if (feed && episodes.has(feed[2]!)) {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' });
        res.end(rss(base, `Feed ${feed[2]}`, episodes.get(feed[2]!)!));
      };
      // a slow host: the feed comes after SLOW_FEED_MS, while its reader waits
      if (feed[1] === 'slow-feed') setTimeout(answer, SLOW_FEED_MS);
      else answer();
    } else if (path === '/bomb.xml') {
      res.writeHead(200, { 'content-type': 'application/rss+xml' });
      res.end(BOMB);
    } else if (path === '/five-videos.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      const videos = [1, 2, 3, 4, 5].map((n) => `<h2>Clip ${n}</h2><video controls src="/clips/${n}.mp4"></video>`).join('\n');
      res.end(`<!doctype html><html><head><title>Five clips</title></head><body>${videos}</body></html>`);
    } else if (path.startsWith('/refusing/')) {
      res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '60' });
      res.end('slow down');
    } else if (path.startsWith('/missing/')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no such episode');
    } else if (path.startsWith('/stall/')) {
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(wav.length * 100) });
      res.write(wav.subarray(0, 44));
      stalled.add(res);
      const timer = setInterval(() => res.write(Buffer.alloc(16)), 1000);
      res.on('close', () => {
        clearInterval(timer);
        stalled.delete(res);
      });
    } else if (path.endsWith('.wav')) {
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(wav.length) });
      res.end(wav);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (p) => base + p,
    hits,
    episodes,
    async close() {
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
