import { runYtdlp } from '../ytdlp/warm-runs';
import { noteYtdlpWarnings, warningCollector } from '../ytdlp/warnings';
import { classify, parseSingleVideoJson, YtDlpError, ytdlpBinary, ytdlpInvocation, type YtDlpEngineOptions } from '../ytdlp/ytdlp.engine';
import {
  type Comment,
  CommentsError,
  type CommentsProvider,
  type CommentsRequest,
  countOf,
  isoFromUnix,
  oldestFirst,
  orderTopLevel,
  type Reply,
} from './provider';

/** One entry of yt-dlp's flat `comments` list. */
export interface YtDlpComment {
  id?: string | number;
  parent?: string | number | null;
  text?: string | null;
  author?: string | null;
  author_id?: string | null;
  author_url?: string | null;
  like_count?: number | null;
  timestamp?: number | null;
  is_pinned?: boolean | null;
}

interface YtDlpCommentsInfo {
  id?: string;
  title?: string;
  extractor_key?: string;
  _type?: string;
  /** Absent: the extractor does not extract comments; null: comments are disabled. */
  comments?: YtDlpComment[] | null;
}

export type YtDlpCommentsOptions = Pick<YtDlpEngineOptions, 'binary' | 'ffmpegPath' | 'ffprobePath' | 'pluginDirs' | 'extraArgs' | 'denoPath' | 'extractorArgs' | 'warm'>;

/**
 * yt-dlp's extractor arguments for a comments run. yt-dlp's YouTube extractor is the one that honours
 * limits and order (`max_comments=max-comments,max-parents,max-replies,...`, `comment_sort=top|new`);
 * every other extractor returns what it returns, and mapYtDlpComments orders and cuts it.
 */
export function commentExtractorArgs(req: Pick<CommentsRequest, 'maxComments' | 'sort' | 'includeReplies'>): string[] {
  const maxComments = `all,${req.maxComments},${req.includeReplies ? 'all' : '0'}`;
  return ['--extractor-args', `youtube:max_comments=${maxComments};comment_sort=${req.sort === 'newest' ? 'new' : 'top'}`];
}

/** Comments through yt-dlp (`--write-comments`, i.e. getcomments): YouTube, SoundCloud, Bilibili, Instagram, … */
export function createYtDlpCommentsProvider(opts: YtDlpCommentsOptions): CommentsProvider {
  const invocation = ytdlpInvocation(opts);
  return {
    name: 'yt-dlp',
    handles: () => Promise.resolve(true),
    async extract(req) {
      const own = [
        '--skip-download',
        '--ignore-no-formats-error',
        '--write-comments',
        ...commentExtractorArgs(req),
        '--dump-single-json',
        '--',
        req.url,
      ];
      const warnings = warningCollector();
      const res = await runYtdlp(ytdlpBinary(opts), { ...invocation(req.proxyUrl, own, req.url), signal: req.signal, onLine: warnings.onLine, warm: opts.warm });
      if (req.signal?.aborted) throw new CommentsError('failed', 'comment extraction cancelled');
      noteYtdlpWarnings(warnings.text(), req.url, req.context);
      if (res.code !== 0) throw fromYtDlp(classify(res.stderr, req.url));
      let info: YtDlpCommentsInfo;
      try {
        info = parseSingleVideoJson<YtDlpCommentsInfo>(res.stdout);
      } catch (err) {
        throw err instanceof YtDlpError ? fromYtDlp(err) : err;
      }
      const platform = info.extractor_key ?? 'this';
      if (!('comments' in info) || info.comments === undefined) {
        throw new CommentsError('unsupported', `Comments are not supported for this platform (yt-dlp's ${platform} extractor does not extract comments)`);
      }
      if (info.comments === null) throw new CommentsError('unavailable', 'Comments are disabled or not available for this video');
      return { title: info.title ?? info.id ?? '', comments: mapYtDlpComments(info.comments, req) };
    },
  };
}

function fromYtDlp(err: YtDlpError): CommentsError {
  return new CommentsError(err.kind === 'filtered' ? 'unavailable' : err.kind, err.message);
}

function toReply(c: YtDlpComment): Reply {
  return {
    id: String(c.id ?? ''),
    text: typeof c.text === 'string' ? c.text : '',
    author: typeof c.author === 'string' ? c.author : '',
    author_url: typeof c.author_url === 'string' ? c.author_url : '',
    like_count: countOf(c.like_count),
    timestamp: isoFromUnix(c.timestamp),
  };
}

const isRoot = (parent: YtDlpComment['parent']) => parent === undefined || parent === null || parent === 'root' || parent === '';

/**
 * yt-dlp's flat list (linked by `parent`, "root" at the top) → the Comment/Reply tree: replies at any
 * depth go into their top-level comment's `replies`, oldest first; replies whose thread is not in the
 * list are dropped; top level is ordered by the requested sort and cut to maxComments.
 */
export function mapYtDlpComments(list: YtDlpComment[], req: Pick<CommentsRequest, 'maxComments' | 'sort' | 'includeReplies'>): Comment[] {
  const parentOf = new Map<string, string | null>();
  for (const c of list) if (c.id !== undefined && c.id !== null) parentOf.set(String(c.id), isRoot(c.parent) ? null : String(c.parent));

  const tops = new Map<string, Comment>();
  for (const c of list) {
    if (c.id === undefined || c.id === null || !isRoot(c.parent)) continue;
    const id = String(c.id);
    if (!tops.has(id)) tops.set(id, { ...toReply(c), is_pinned: c.is_pinned === true, replies: [] });
  }
  if (req.includeReplies) {
    const seenReplies = new Set<string>();
    for (const c of list) {
      if (c.id === undefined || c.id === null || isRoot(c.parent)) continue;
      const id = String(c.id);
      if (seenReplies.has(id)) continue;
      // climb to the thread's top-level comment (guarding against cycles)
      let cur: string | null | undefined = String(c.parent);
      for (let hops = 0; cur && parentOf.get(cur) && hops < 1000; hops++) cur = parentOf.get(cur);
      const top = cur ? tops.get(cur) : undefined;
      if (!top) continue;
      seenReplies.add(id);
      top.replies.push(toReply(c));
    }
    for (const t of tops.values()) t.replies = oldestFirst(t.replies);
  }
  return orderTopLevel([...tops.values()], req.sort).slice(0, req.maxComments);
}
