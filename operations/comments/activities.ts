import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { CommentsError, countComments, pickProvider, toCommentsFile, type CommentSort, type CommentsProvider } from '../../engines/comments/provider';
import { checkUrlAddress } from '../../engines/egress/address-check';
import type { EgressProxy } from '../../engines/egress/egress-proxy';
import type { Storage } from '../../engines/storage';
import type { Config } from '../../lib/config';
import { JobFailure } from '../../lib/job-failure';
import type { JobOutput } from '../../lib/job-reports';
import { throughEgress } from '../../activities/step/egress-run';
import { classifiedFailure } from '../../activities/step/failures';
import { keepAlive, progressReporter } from '../../activities/step/heartbeat';
import { createPeerTubeProvider } from '../../engines/comments/peertube';
import { createYtDlpCommentsProvider } from '../../engines/comments/ytdlp-comments';
import { ytdlpOptionsOf } from '../../engines/ytdlp/ytdlp.engine';
import { egressOf, type StepDeps } from '../step-deps';

export interface CommentsDeps {
  /** In order of preference; the last one (yt-dlp) handles every URL. */
  providers: CommentsProvider[];
  storage: Storage;
  /** yt-dlp's requests go through it; the PeerTube provider uses the egress HTTP client. */
  egress: EgressProxy;
  config: Pick<Config, 'allowPrivateNetwork'>;
}

export interface ExtractCommentsInput {
  jobId: string;
  url: string;
  maxComments: number;
  sort: CommentSort;
  includeReplies: boolean;
  progressRange: [number, number];
}

export const COMMENTS_FILE_NAME = 'comments.json';

/** Comment extraction for the `media-fetch` queue: picks the provider by URL, writes the comments JSON file. */
export function createCommentsActivities(deps: CommentsDeps) {
  const { providers, storage, egress, config } = deps;
  return {
    async extractComments(input: ExtractCommentsInput): Promise<JobOutput> {
      const check = await checkUrlAddress(input.url, config.allowPrivateNetwork);
      if (!check.ok) throw JobFailure.user('rejected', `The source URL ${check.reason}`);
      const signal = Context.current().cancellationSignal;
      const report = progressReporter(input.progressRange);
      const stop = keepAlive();
      try {
        const provider = await pickProvider(providers, input.url, signal);
        const result = await throughEgress(egress, input.url, (proxyUrl) => provider.extract({
          url: input.url,
          proxyUrl,
          maxComments: input.maxComments,
          sort: input.sort,
          includeReplies: input.includeReplies,
          signal,
          onProgress: report,
          context: { jobId: input.jobId },
        }));
        const file = toCommentsFile(input.url, result);
        const outputFile = storage.outputRelative(input.jobId, COMMENTS_FILE_NAME);
        const abs = storage.outputPath(outputFile);
        await fs.mkdir(path.dirname(abs), { recursive: true });
        await fs.writeFile(`${abs}.tmp`, JSON.stringify(file));
        await fs.rename(`${abs}.tmp`, abs);
        await storage.commitOutput(outputFile);
        const topLevel = file.comments.length;
        return {
          outputFile,
          resultData: {
            title: file.title,
            comment_count: countComments(file.comments),
            top_level_count: topLevel,
            reply_count: file.comment_count - topLevel,
            sort: input.sort,
          },
        };
      } catch (err) {
        throw toFailure(err);
      } finally {
        stop();
      }
    },
  };
}

function toFailure(err: unknown): unknown {
  return err instanceof CommentsError ? classifiedFailure(err.kind, err.message, 'comments') : err;
}

/** The comments' own step, as its worker builds it: PeerTube instances over their REST API, everything else through yt-dlp. */
export function commentsSteps(deps: StepDeps) {
  const { config, storage } = deps;
  const providers = [createPeerTubeProvider({ allowPrivateNetwork: config.allowPrivateNetwork }), createYtDlpCommentsProvider(ytdlpOptionsOf(config))];
  return createCommentsActivities({ providers, storage, egress: egressOf(deps), config });
}
