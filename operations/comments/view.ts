import { MAX_INLINE_COMMENTS, type JobOutputView, type OutputContext } from '../output-view';
import type { Comment } from '../../engines/comments/provider';

/** The first top-level comments with their replies; the file has them all. */
export async function showComments(job: OutputContext): Promise<JobOutputView> {
  const content = await job.readText();
  if (content === null) return { kind: 'unavailable', reason: 'The comments file is too large to show here or no longer stored; use the download link.' };
  const file = JSON.parse(content) as { title?: string; comments?: Comment[] };
  const comments = file.comments ?? [];
  return { kind: 'comments', title: file.title ?? '', comments: comments.slice(0, MAX_INLINE_COMMENTS), topLevelTotal: comments.length };
}
