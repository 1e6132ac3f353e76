import { z } from 'zod';
import { intIn, SourceUrl, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';

export const COMMENT_SORTS = ['top', 'newest'] as const;

export const CommentsRequestSchema = z
  .strictObject({
    url: SourceUrl,
    max_comments: intIn(1, 1000).default(100).meta({ description: 'Maximum top-level comments (replies are not counted)' }),
    sort: z.enum(COMMENT_SORTS, { error: 'must be "top" or "newest"' }).default('top').meta({ description: '`top`: most liked first (PeerTube: most replies first); `newest`: newest first' }),
    include_replies: z.boolean({ error: 'must be true or false' }).default(true).meta({ description: 'false leaves every replies array empty' }),
    upload_id: z.unknown().optional().meta({ description: 'Not for comments: an uploaded file has no comment thread' }),
    webhook_url: WebhookUrl,
  })
  .superRefine((p, ctx) => {
    if (p.upload_id !== undefined) ctx.addIssue({ code: 'custom', path: ['upload_id'], message: 'comments are read from the page a video is on, and an uploaded file has none: give the page\'s url' });
  })
  .meta({ id: 'CommentsRequest' });

export type CommentsParams = z.output<typeof CommentsRequestSchema>;

export const CommentsResultSchema = z
  .looseObject({
    title: z.string(),
    comment_count: z.number().int().meta({ description: 'everything in the file: top level plus replies' }),
    top_level_count: z.number().int(),
    reply_count: z.number().int(),
    sort: z.enum(COMMENT_SORTS),
  })
  .meta({ id: 'CommentsResult' });

export const commentsSpec: OperationSpec<'comments', typeof CommentsRequestSchema> = {
  jobType: 'comments',
  path: '/v1/comments',
  title: 'Comments',
  summary: 'Comments and reply threads of a video, as a JSON file',
  request: CommentsRequestSchema,
  result: CommentsResultSchema,
  cost: () => 1,
  costText: '1 credit',
  mcp: { tool: 'get_comments', title: 'Get comments' },
  output: 'json',
};
