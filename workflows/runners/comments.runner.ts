import { mediaFetch } from '../activity-proxies';
import type { OperationRunner } from './types';

/** Comments: one activity on media-fetch picks the provider by URL and writes the JSON file. */
export const runComments: OperationRunner<'comments'> = ({ jobId, params }) =>
  mediaFetch.extractComments({
    jobId,
    url: params.url,
    maxComments: params.max_comments,
    sort: params.sort,
    includeReplies: params.include_replies,
    progressRange: [0, 99],
  });
