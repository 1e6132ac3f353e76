import type { CommentsParams, JobOutput } from '../lib/job.types';
import { fetch } from './activities';

/** Comments operation: one activity on media-fetch picks the provider by URL and writes the JSON file. */
export async function runComments(jobId: string, params: CommentsParams): Promise<JobOutput> {
  return fetch.extractComments({
    jobId,
    url: params.url,
    maxComments: params.max_comments,
    sort: params.sort,
    includeReplies: params.include_replies,
    progressRange: [0, 99],
  });
}
