/**
 * A PeerTube instance for tests, implementing the public REST endpoints the comments provider uses,
 * as PeerTube's REST reference documents them:
 *   GET /api/v1/config                                      (ServerConfig: serverVersion, instance, …)
 *   GET /api/v1/videos/{id|uuid|shortUUID}                  (VideoDetails)
 *   GET /api/v1/videos/{id}/comment-threads?start&count&sort  (CommentThreadResponse; count ≤ 100,
 *       sort one of createdAt, -createdAt, totalReplies, -totalReplies; default -createdAt)
 *   GET /api/v1/videos/{id}/comment-threads/{threadId}      (VideoCommentThreadTree: comment + children)
 *
 * Videos:
 *   big    1,200 threads. Thread k (1..1200) has id k and was created at BASE + k minutes, so k is also
 *          its rank by age. Reply shapes, by k:
 *            k % 10 == 0  a deep thread (5 replies, three levels, see deepReplies), whose oldest-first
 *                         order differs from the tree's depth-first order;
 *            k % 3 == 0   (k % 4) + 1 direct replies;
 *            otherwise    no replies.
 *          Deleted (tombstones: isDeleted, text "", account null): the root of thread 600 (its replies
 *          remain), the root of thread 1199 (no replies), and reply "b" (level 2) of thread 300 (its own
 *          reply remains).
 *          -totalReplies ties are broken by -createdAt (documented here; the tests derive the expected
 *          order from the same rule).
 *   empty  no comments.
 *   closed comments disabled (commentsPolicy 2, commentsEnabled false).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PeerTubeComment, PeerTubeThreadTree } from '../../engines/comments/peertube';

export const PT_BASE_TIME = Date.UTC(2024, 0, 1, 0, 0, 0);
export const PT_THREADS = 1200;
export const PT_DELETED_ROOTS = new Set([600, 1199]);

export interface PeerTubeVideoFixture {
  id: number;
  uuid: string;
  shortUUID: string;
  name: string;
  commentsPolicy: number;
}

export const PT_VIDEOS: Record<'big' | 'empty' | 'closed', PeerTubeVideoFixture> = {
  big: { id: 11, uuid: '9c9de5e8-0a1b-4c6d-8e2f-0123456789ab', shortUUID: 'kBigThreads1200', name: 'Federated Fixture: 1,200 threads', commentsPolicy: 1 },
  empty: { id: 12, uuid: '1f1f1f1f-2e2e-4d4d-8c8c-3b3b3b3b3b3b', shortUUID: 'kEmptyVideo', name: 'Quiet video', commentsPolicy: 1 },
  closed: { id: 13, uuid: '5a5a5a5a-6b6b-4c7c-8d8d-9e9e9e9e9e9e', shortUUID: 'kClosedVideo', name: 'Comments off', commentsPolicy: 2 },
};

interface Node {
  c: PeerTubeComment;
  children: Node[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The replies of thread k as a tree (times relative to the root, seconds). */
function replyShape(k: number): { key: string; parent: string | null; dt: number; deleted?: boolean }[] {
  if (k % 10 === 0) {
    // depth-first: a, b, c, d, e — oldest first: a(10) b(15) d(20) e(25) c(30)
    return [
      { key: 'a', parent: null, dt: 10 },
      { key: 'b', parent: 'a', dt: 15, deleted: k === 300 },
      { key: 'c', parent: 'b', dt: 30 },
      { key: 'd', parent: null, dt: 20 },
      { key: 'e', parent: 'd', dt: 25 },
    ];
  }
  if (k % 3 === 0) return Array.from({ length: (k % 4) + 1 }, (_, j) => ({ key: `r${j}`, parent: null, dt: 40 * (j + 1) }));
  return [];
}

export interface ExpectedReply {
  id: string;
  text: string;
  timestamp: string;
}
export interface ExpectedThread {
  id: string;
  text: string;
  author: string;
  timestamp: string;
  deleted: boolean;
  totalReplies: number;
  /** Non-deleted replies, oldest first. */
  replies: ExpectedReply[];
}

/** The fixture's known data, for the tests' expectations. */
export function peerTubeExpected(): ExpectedThread[] {
  return bigThreads().map((n) => {
    const replies: ExpectedReply[] = [];
    const walk = (ns: Node[]) => ns.forEach((x) => (x.c.isDeleted ? null : replies.push({ id: String(x.c.id), text: x.c.text, timestamp: x.c.createdAt }), walk(x.children)));
    walk(n.children);
    replies.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
    return {
      id: String(n.c.id),
      text: n.c.text,
      author: n.c.account?.displayName ?? '',
      timestamp: n.c.createdAt,
      deleted: n.c.isDeleted,
      totalReplies: n.c.totalReplies ?? 0,
      replies,
    };
  });
}

/** Thread order of the fixture for PeerTube's sorts. */
export function peerTubeOrder<T extends { totalReplies: number; timestamp: string }>(threads: T[], sort: '-createdAt' | '-totalReplies'): T[] {
  return [...threads].sort((a, b) => (sort === '-totalReplies' ? b.totalReplies - a.totalReplies : 0) || Date.parse(b.timestamp) - Date.parse(a.timestamp));
}

let cached: Node[] | null = null;
function bigThreads(): Node[] {
  if (cached) return cached;
  const out: Node[] = [];
  let nextReplyId = 100_000;
  const account = (n: number, host: string) => ({ name: `user${n}`, displayName: `User ${n}`, url: `http://${host}/accounts/user${n}`, host });
  for (let k = 1; k <= PT_THREADS; k++) {
    const rootAt = PT_BASE_TIME + k * 60_000;
    const rootDeleted = PT_DELETED_ROOTS.has(k);
    const root: Node = {
      c: {
        id: k,
        url: `http://HOST/videos/watch/${PT_VIDEOS.big.uuid};threadId=${k}`,
        text: rootDeleted ? '' : `Thread ${k}: comment text with ünïcode ✓`,
        threadId: k,
        inReplyToCommentId: null,
        createdAt: iso(rootAt),
        deletedAt: rootDeleted ? iso(rootAt + 3600_000) : null,
        isDeleted: rootDeleted,
        totalReplies: 0,
        account: rootDeleted ? null : account(k % 97, 'HOST'),
      },
      children: [],
    };
    const byKey = new Map<string, Node>();
    for (const r of replyShape(k)) {
      const id = nextReplyId++;
      const parent = r.parent ? byKey.get(r.parent)! : root;
      const node: Node = {
        c: {
          id,
          text: r.deleted ? '' : `Reply ${r.key} in thread ${k}`,
          threadId: k,
          inReplyToCommentId: parent.c.id,
          createdAt: iso(rootAt + r.dt * 1000),
          deletedAt: r.deleted ? iso(rootAt + 7200_000) : null,
          isDeleted: !!r.deleted,
          totalReplies: 0,
          account: r.deleted ? null : account((k + id) % 89, 'remote.example'),
        },
        children: [],
      };
      byKey.set(r.key, node);
      parent.children.push(node);
      if (!r.deleted) root.c.totalReplies = (root.c.totalReplies ?? 0) + 1;
    }
    out.push(root);
  }
  cached = out;
  return out;
}

export interface PeerTubeFixture {
  baseUrl: string;
  host: string;
  url(path: string): string;
  /** Every request path with its query, in order. */
  requests: string[];
  close(): Promise<void>;
}

function withHost<T>(value: T, host: string): T {
  return JSON.parse(JSON.stringify(value).replaceAll('http://HOST', `http://${host}`).replaceAll('"HOST"', JSON.stringify(host))) as T;
}

function toTree(n: Node): PeerTubeThreadTree {
  return { comment: n.c, children: n.children.map(toTree) };
}

export async function startPeerTubeFixture(opts: { host?: string; port?: number; baseUrl?: string } = {}): Promise<PeerTubeFixture> {
  const threads = bigThreads();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const u = new URL(req.url ?? '/', 'http://x');
    const host = req.headers.host ?? 'localhost';
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(withHost(body, host)));
    };
    const error = (status: number, detail: string) => send(status, { type: 'about:blank', title: http.STATUS_CODES[status], detail, status });
    if (u.pathname === '/api/v1/config') {
      return send(200, { instance: { name: 'Fixture Tube', shortDescription: 'A test instance' }, serverVersion: '7.0.0', serverCommit: 'fixture', signup: { allowed: false } });
    }
    const m = /^\/api\/v1\/videos\/([^/]+)(?:\/comment-threads(?:\/(\d+))?)?$/.exec(u.pathname);
    const video = m && Object.values(PT_VIDEOS).find((v) => [String(v.id), v.uuid, v.shortUUID].includes(decodeURIComponent(m[1]!)));
    if (!m || !video) return error(404, 'Video not found');
    const list = video === PT_VIDEOS.big ? threads : [];
    if (!u.pathname.includes('/comment-threads')) {
      return send(200, {
        id: video.id,
        uuid: video.uuid,
        shortUUID: video.shortUUID,
        name: video.name,
        url: `http://HOST/videos/watch/${video.uuid}`,
        duration: 42,
        commentsEnabled: video.commentsPolicy !== 2,
        commentsPolicy: { id: video.commentsPolicy, label: video.commentsPolicy === 2 ? 'Disabled' : 'Enabled' },
      });
    }
    if (video.commentsPolicy === 2) return send(200, { total: 0, totalNotDeletedComments: 0, data: [] });
    if (m[2]) {
      const t = list.find((n) => n.c.id === Number(m[2]));
      return t ? send(200, toTree(t)) : error(404, 'Thread not found');
    }
    const start = Number(u.searchParams.get('start') ?? 0);
    const count = Number(u.searchParams.get('count') ?? 15);
    const sort = u.searchParams.get('sort') ?? '-createdAt';
    if (!Number.isInteger(start) || start < 0) return error(400, 'start must be a positive integer');
    if (!Number.isInteger(count) || count < 0 || count > 100) return error(400, 'count must be an integer between 0 and 100');
    const keyOf: Record<string, (n: Node) => number> = {
      createdAt: (n) => Date.parse(n.c.createdAt),
      totalReplies: (n) => n.c.totalReplies ?? 0,
    };
    const field = sort.replace(/^-/, '');
    if (!keyOf[field]) return error(400, `sort ${sort} is not allowed`);
    const dir = sort.startsWith('-') ? -1 : 1;
    const sorted = [...list].sort((a, b) => dir * (keyOf[field]!(a) - keyOf[field]!(b)) || Date.parse(b.c.createdAt) - Date.parse(a.c.createdAt));
    return send(200, {
      total: list.length,
      totalNotDeletedComments: list.filter((n) => !n.c.isDeleted).length,
      data: sorted.slice(start, start + count).map((n) => n.c),
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = opts.baseUrl ?? `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    host: new URL(baseUrl).host,
    url: (p) => baseUrl + p,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
