// Comment providers: one interface, one implementation per source (yt-dlp, PeerTube's REST API).

/** A reply inside a thread (the API's Reply object, docs/operations.md). */
export interface Reply {
  id: string;
  text: string;
  author: string;
  author_url: string;
  like_count: number;
  /** ISO 8601 UTC; null only when the platform gives no time at all. */
  timestamp: string | null;
}

/** A top-level comment with its thread (the API's Comment object). */
export interface Comment extends Reply {
  is_pinned: boolean;
  replies: Reply[];
}

export type CommentSort = 'top' | 'newest';

export interface CommentsRequest {
  url: string;
  /** Top-level comments wanted, 1..1000. */
  maxComments: number;
  sort: CommentSort;
  includeReplies: boolean;
  /** The egress proxy URL of this run, for providers that run tools (yt-dlp); HTTP providers use the egress client. */
  proxyUrl: string;
  signal?: AbortSignal;
  /** 0..1 of the extraction, when the provider can tell. */
  onProgress?: (fraction: number) => void;
  /** The job it is for, for the provider's log lines. */
  context?: { jobId?: string };
}

export interface CommentsResult {
  title: string;
  /** Top level in the requested order, each with its replies oldest first (empty when replies are off). */
  comments: Comment[];
}

export type CommentsErrorKind = 'unsupported' | 'unavailable' | 'rejected' | 'refused' | 'failed';

/** A provider failure, classified like YtDlpError: unsupported, unavailable and rejected (egress refused) are the user's, failed may be retried. */
export class CommentsError extends Error {
  constructor(
    readonly kind: CommentsErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'CommentsError';
  }
}

export interface CommentsProvider {
  readonly name: string;
  /** True when this provider handles the URL (may ask the host, e.g. PeerTube's /api/v1/config). */
  handles(url: string, signal?: AbortSignal): Promise<boolean>;
  extract(req: CommentsRequest): Promise<CommentsResult>;
}

/** The first provider that handles the URL; the last one is the catch-all. */
export async function pickProvider(providers: CommentsProvider[], url: string, signal?: AbortSignal): Promise<CommentsProvider> {
  for (const p of providers) if (await p.handles(url, signal)) return p;
  throw new CommentsError('unsupported', `No comments provider supports ${url}`);
}

/** The comments JSON file a comments job delivers (docs/operations.md). */
export interface CommentsFile {
  url: string;
  title: string;
  comment_count: number;
  comments: Comment[];
}

export function toCommentsFile(url: string, result: CommentsResult): CommentsFile {
  return { url, title: result.title, comment_count: countComments(result.comments), comments: result.comments };
}

/** Everything in the file: top-level comments plus replies. */
export function countComments(comments: Comment[]): number {
  return comments.reduce((n, c) => n + 1 + c.replies.length, 0);
}

/** Unix seconds → ISO 8601 UTC (`…Z`); null when unknown. */
export function isoFromUnix(ts: unknown): string | null {
  const n = typeof ts === 'number' ? ts : typeof ts === 'string' && ts.trim() !== '' ? Number(ts) : NaN;
  if (!Number.isFinite(n)) return null;
  const d = new Date(n * 1000);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** Any date string → ISO 8601 UTC; null when unreadable. */
export function isoFromString(s: unknown): string | null {
  if (typeof s !== 'string' || !s) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** A non-negative integer count; 0 when unknown. */
export function countOf(v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

const timeKey = (t: string | null) => (t === null ? Number.NaN : Date.parse(t));

/** Oldest first; comments without a time keep their place after the dated ones (stable). */
export function oldestFirst<T extends { timestamp: string | null }>(items: T[]): T[] {
  return items
    .map((item, i) => ({ item, i, t: timeKey(item.timestamp) }))
    .sort((a, b) => (Number.isNaN(a.t) ? (Number.isNaN(b.t) ? a.i - b.i : 1) : Number.isNaN(b.t) ? -1 : a.t - b.t || a.i - b.i))
    .map((x) => x.item);
}

/** Orders top-level comments: `top` by like_count descending, `newest` by time descending; ties keep the platform's order. */
export function orderTopLevel(comments: Comment[], sort: CommentSort): Comment[] {
  const idx = comments.map((c, i) => ({ c, i, t: timeKey(c.timestamp) }));
  idx.sort((a, b) => {
    if (sort === 'top') return b.c.like_count - a.c.like_count || a.i - b.i;
    if (Number.isNaN(a.t) || Number.isNaN(b.t)) return Number.isNaN(a.t) ? (Number.isNaN(b.t) ? a.i - b.i : 1) : -1;
    return b.t - a.t || a.i - b.i;
  });
  return idx.map((x) => x.c);
}
