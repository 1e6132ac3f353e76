import { EgressRefusedError } from '../egress/address-check';
import { egressRequest, readBody } from '../egress/http-client';
import {
  type Comment,
  CommentsError,
  type CommentsProvider,
  type CommentsRequest,
  type CommentsResult,
  isoFromString,
  oldestFirst,
  type Reply,
} from './provider';

/** PeerTube's VideoComment, the fields read here (REST reference: VideoComment). */
export interface PeerTubeComment {
  id: number;
  url?: string;
  text: string;
  threadId: number;
  inReplyToCommentId: number | null;
  createdAt: string;
  deletedAt?: string | null;
  isDeleted: boolean;
  totalReplies?: number;
  account: { name?: string; displayName?: string; url?: string; host?: string } | null;
}

export interface PeerTubeThreadTree {
  comment: PeerTubeComment;
  children: PeerTubeThreadTree[];
}

interface PeerTubeVideo {
  id: number;
  uuid: string;
  shortUUID?: string;
  name: string;
  commentsEnabled?: boolean;
  commentsPolicy?: { id: number; label?: string };
}

export interface PeerTubeOptions {
  /** The same address rule as every other source fetch (ALLOW_PRIVATE_NETWORK). */
  allowPrivateNetwork: boolean;
  /** How long the answer of a host's /api/v1/config is kept. */
  configCacheMs?: number;
  /** Per HTTP request. */
  requestTimeoutMs?: number;
  /** Thread trees fetched at once. */
  concurrency?: number;
}

/** PeerTube's `count` maximum for comment-threads. */
export const PEERTUBE_PAGE_MAX = 100;

const WATCH_PATH = /^\/(?:w|videos\/watch)\/([A-Za-z0-9-]+)\/?$/;

/** `https://HOST/w/ID` or `https://HOST/videos/watch/ID` → the video id; null for any other path. */
export function peerTubeVideoId(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return WATCH_PATH.exec(url.pathname)?.[1] ?? null;
}

/**
 * PeerTube over its public REST API. Deleted comments (PeerTube keeps them as tombstones: isDeleted,
 * empty text, account null) are left out; a deleted top-level comment whose thread still has replies
 * stays as a placeholder (text "", author "", author_url "") so its replies keep their thread.
 * PeerTube has no likes: like_count is 0 and `top` uses PeerTube's `-totalReplies` order.
 */
export function createPeerTubeProvider(opts: PeerTubeOptions): CommentsProvider {
  const cacheMs = opts.configCacheMs ?? 60 * 60 * 1000;
  const timeoutMs = opts.requestTimeoutMs ?? 30_000;
  const concurrency = opts.concurrency ?? 8;
  const instances = new Map<string, { peertube: boolean; at: number }>();

  async function getJson<T>(url: string, signal?: AbortSignal): Promise<{ status: number; body: T | null }> {
    let target = url;
    for (let hop = 0; hop < 4; hop++) {
      let res;
      try {
        res = await egressRequest({ url: target, method: 'GET', headers: { accept: 'application/json' }, timeoutMs, signal, allowPrivate: opts.allowPrivateNetwork, traffic: 'source' });
      } catch (err) {
        if (err instanceof EgressRefusedError) throw new CommentsError('rejected', err.message);
        if (signal?.aborted) throw new CommentsError('failed', 'comment extraction cancelled');
        throw new CommentsError('failed', `PeerTube request to ${new URL(target).host} failed: ${(err as Error).message}`);
      }
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status >= 300 && status < 400 && location) {
        res.resume();
        target = new URL(location, target).toString(); // a new request: checked again at connect time
        continue;
      }
      if (status < 200 || status >= 300) {
        res.resume();
        return { status, body: null };
      }
      try {
        return { status, body: JSON.parse(await readBody(res)) as T };
      } catch {
        return { status, body: null };
      }
    }
    throw new CommentsError('failed', `PeerTube request to ${url} redirected too often`);
  }

  async function isPeerTube(origin: string, signal?: AbortSignal): Promise<boolean> {
    const hit = instances.get(origin);
    if (hit && Date.now() - hit.at < cacheMs) return hit.peertube;
    let peertube = false;
    try {
      const { body } = await getJson<{ serverVersion?: unknown; instance?: unknown }>(`${origin}/api/v1/config`, signal);
      peertube = !!body && typeof body.serverVersion === 'string' && typeof body.instance === 'object' && body.instance !== null;
    } catch (err) {
      if (err instanceof CommentsError && err.kind === 'failed') return false; // unreachable now: not cached, yt-dlp decides
      throw err;
    }
    instances.set(origin, { peertube, at: Date.now() });
    return peertube;
  }

  const toReply = (c: PeerTubeComment): Reply => ({
    id: String(c.id),
    text: c.isDeleted ? '' : (c.text ?? ''),
    author: c.account ? (c.account.displayName ?? c.account.name ?? '') : '',
    author_url: c.account?.url ?? '',
    like_count: 0,
    timestamp: isoFromString(c.createdAt),
  });

  /** Every non-deleted descendant of the tree, oldest first (depth flattened). */
  function flatten(tree: PeerTubeThreadTree): Reply[] {
    const out: Reply[] = [];
    const walk = (nodes: PeerTubeThreadTree[]) => {
      for (const n of nodes) {
        if (!n.comment.isDeleted) out.push(toReply(n.comment));
        walk(n.children ?? []);
      }
    };
    walk(tree.children ?? []);
    return oldestFirst(out);
  }

  return {
    name: 'peertube',
    async handles(url, signal) {
      if (!peerTubeVideoId(url)) return false;
      return isPeerTube(new URL(url).origin, signal);
    },

    async extract(req: CommentsRequest): Promise<CommentsResult> {
      const id = peerTubeVideoId(req.url);
      if (!id) throw new CommentsError('unsupported', `${req.url} is not a PeerTube video URL`);
      const api = `${new URL(req.url).origin}/api/v1/videos/${encodeURIComponent(id)}`;

      const video = await getJson<PeerTubeVideo>(api, req.signal);
      if (video.status === 404 || video.status === 403 || video.status === 401) {
        throw new CommentsError('unavailable', `The source is not available: the PeerTube instance answered ${video.status} for video ${id}`);
      }
      if (!video.body) throw new CommentsError('failed', `The PeerTube instance answered ${video.status} for video ${id}`);
      const v = video.body;
      if (v.commentsEnabled === false || v.commentsPolicy?.id === 2) throw new CommentsError('unavailable', 'Comments are disabled for this video');
      const base = `${new URL(req.url).origin}/api/v1/videos/${encodeURIComponent(v.uuid ?? id)}/comment-threads`;
      const sort = req.sort === 'top' ? '-totalReplies' : '-createdAt';

      // Top level: page through the threads until maxComments are kept or the list ends.
      const tops: { comment: PeerTubeComment; out: Comment }[] = [];
      let start = 0;
      for (;;) {
        const want = req.maxComments - tops.length;
        if (want <= 0) break;
        const count = Math.min(PEERTUBE_PAGE_MAX, want);
        const page = await getJson<{ total: number; data: PeerTubeComment[] }>(`${base}?start=${start}&count=${count}&sort=${sort}`, req.signal);
        if (!page.body) throw new CommentsError('failed', `The PeerTube instance answered ${page.status} for the comment threads of ${id}`);
        const data = page.body.data ?? [];
        for (const c of data) {
          if (tops.length >= req.maxComments) break;
          // A deleted thread is kept (as a placeholder) only for the replies it still has.
          if (c.isDeleted && (!req.includeReplies || !c.totalReplies)) continue;
          tops.push({ comment: c, out: { ...toReply(c), is_pinned: false, replies: [] } });
        }
        start += data.length;
        req.onProgress?.(req.includeReplies ? 0.2 * (tops.length / req.maxComments) : tops.length / req.maxComments);
        if (data.length === 0 || start >= (page.body.total ?? 0)) break;
      }

      // Replies: one thread tree per thread that has any.
      if (req.includeReplies) {
        const todo = tops.filter((t) => (t.comment.totalReplies ?? 0) > 0);
        let next = 0;
        let done = 0;
        const worker = async () => {
          while (next < todo.length) {
            const t = todo[next++]!;
            const tree = await getJson<PeerTubeThreadTree>(`${base}/${t.comment.id}`, req.signal);
            if (tree.status === 404) continue; // thread removed meanwhile
            if (!tree.body) throw new CommentsError('failed', `The PeerTube instance answered ${tree.status} for thread ${t.comment.id}`);
            t.out.replies = flatten(tree.body);
            done++;
            req.onProgress?.(0.2 + 0.8 * (done / todo.length));
          }
        };
        await Promise.all(Array.from({ length: Math.min(concurrency, todo.length) }, worker));
      }

      return { title: v.name, comments: tops.map((t) => t.out) };
    },
  };
}
