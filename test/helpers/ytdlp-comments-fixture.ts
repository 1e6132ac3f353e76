/**
 * The fixture host for the yt-dlp comments plugin (test/fixtures/ytdlp-plugins/…/fixture_comments.py).
 *   GET /ytc/watch/{id}           the page URL the service is given (the plugin matches it)
 *   GET /ytc/api/video/{id}       title, and whether comments are disabled
 *   GET /ytc/api/comments/{id}    yt-dlp-style flat comments (parent "root" at the top), the top level
 *                                 in the order the `sort` query asks (top: most liked, new: newest),
 *                                 each followed by its replies newest first (so the service must reorder)
 * Videos: ytc1 (40 threads, known data below), ytc-empty (no comments), ytc-off (comments disabled).
 * /ytc/media/clip.mp4 is a direct media link (generic extractor: no comment support).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { YtDlpComment } from '../../engines/comments/ytdlp-comments';
import { projectRoot } from '../../lib/config';

/** The folder to pass to yt-dlp's --plugin-dirs (and to YTDLP_PLUGIN_DIRS). */
export const YTDLP_PLUGIN_DIR = path.join(projectRoot, 'test/fixtures/ytdlp-plugins');

export const YTC_BASE_TS = 1_700_000_000; // 2023-11-14T22:13:20Z
export const YTC_THREADS = 40;
export const YTC_VIDEOS: Record<string, { title: string; comments_disabled?: boolean }> = {
  ytc1: { title: 'Plugin Fixture — comments “quoted” & ünïcode' },
  'ytc-empty': { title: 'No comments yet' },
  'ytc-off': { title: 'Comments turned off', comments_disabled: true },
};

/** Top-level comment i: likes 1 + (919 i mod 1000) (distinct), except c5 whose likes are unknown (null). */
export const ytcLikes = (i: number): number | null => (i === 5 ? null : 1 + ((i * 919) % 1000));

/** The known comments of ytc1, as yt-dlp's flat list in thread order (replies oldest first). */
export function ytcThreads(host: string): { top: YtDlpComment; replies: YtDlpComment[] }[] {
  return Array.from({ length: YTC_THREADS }, (_, i) => {
    const ts = YTC_BASE_TS + i * 3600;
    const top: YtDlpComment = {
      id: `c${i}`,
      parent: 'root',
      text: `Comment ${i} — "hello"\nsecond line ✓`,
      author: `@author${i}`,
      author_id: `UC${i}`,
      author_url: i % 5 === 4 ? undefined : `http://${host}/@author${i}`,
      like_count: ytcLikes(i),
      timestamp: ts,
      is_pinned: i === 7,
    };
    const n = i % 4;
    // reply j at +60·(n−j) s: r0 is the newest
    const replies: YtDlpComment[] = Array.from({ length: n }, (_, j) => ({
      id: `c${i}.r${j}`,
      parent: `c${i}`,
      text: `Reply ${j} to ${i}`,
      author: `@replier${j}`,
      author_url: `http://${host}/@replier${j}`,
      like_count: j === 1 ? null : j * 3,
      timestamp: ts + 60 * (n - j),
      is_pinned: false,
    }));
    if (i === 2) replies.push({ id: 'c2.r0.n0', parent: 'c2.r0', text: 'A reply to a reply', author: '@deep', like_count: 1, timestamp: ts + 120 + 30 });
    replies.sort((a, b) => a.timestamp! - b.timestamp!);
    return { top, replies };
  });
}

export interface YtcFixture {
  baseUrl: string;
  url(path: string): string;
  /** Query of each comments request, in order. */
  commentQueries: URLSearchParams[];
  close(): Promise<void>;
}

export async function startYtcFixture(): Promise<YtcFixture> {
  const commentQueries: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const host = req.headers.host ?? 'localhost';
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    let m = /^\/ytc\/watch\/([\w-]+)$/.exec(u.pathname);
    if (m) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(`<!doctype html><title>${m[1]}</title><p>watch page</p>`);
    }
    if (u.pathname === '/ytc/media/clip.mp4') {
      // a direct media link: yt-dlp's generic extractor takes it, and it has no comment extraction
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': '16' });
      return res.end(req.method === 'HEAD' ? undefined : Buffer.alloc(16));
    }
    m = /^\/ytc\/api\/video\/([\w-]+)$/.exec(u.pathname);
    if (m) return YTC_VIDEOS[m[1]!] ? json(200, YTC_VIDEOS[m[1]!]) : json(404, { error: 'no such video' });
    m = /^\/ytc\/api\/comments\/([\w-]+)$/.exec(u.pathname);
    if (m) {
      commentQueries.push(u.searchParams);
      if (!YTC_VIDEOS[m[1]!]) return json(404, { error: 'no such video' });
      if (m[1] !== 'ytc1') return json(200, { comments: [] });
      const sort = u.searchParams.get('sort');
      const threads = ytcThreads(host);
      threads.sort((a, b) => (sort === 'new' ? b.top.timestamp! - a.top.timestamp! : (b.top.like_count ?? 0) - (a.top.like_count ?? 0)));
      const flat: YtDlpComment[] = threads.flatMap((t) => [t.top, ...[...t.replies].reverse()]);
      flat.push({ id: 'orphan', parent: 'not-in-this-list', text: 'A reply whose thread is missing', timestamp: YTC_BASE_TS });
      return json(200, { comments: flat });
    }
    json(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return { baseUrl, url: (p) => baseUrl + p, commentQueries, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
