import { mediaFetch } from '../../workflows/activity-proxies';
import type { OperationRunner } from '../define';
import type { CommentsParams } from './spec';

/** Comments: one activity on media-fetch picks the provider by URL and writes the JSON file. */
export const runComments: OperationRunner<CommentsParams> = ({ jobId, params }) =>
  mediaFetch.extractComments({
    jobId,
    url: params.url,
    maxComments: params.max_comments,
    sort: params.sort,
    includeReplies: params.include_replies,
    progressRange: [0, 99],
  });
