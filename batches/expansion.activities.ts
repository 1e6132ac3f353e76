// A batch's source, expanded once on a media-info worker, every request through the egress rules:
// a feed is read and parsed here; anything else is what yt-dlp lists as a playlist. The selected
// items go to storage (a collection may hold thousands: too many for a workflow's history).
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import { readBody } from '../engines/egress/http-client';
import { platformGate } from '../engines/egress/platform-gate';
import { CollectionError, type CollectionItem, type CollectionListing } from '../engines/collections/collection';
import { looksLikeFeed, parseFeed } from '../engines/collections/feed';
import type { Storage } from '../engines/storage';
import { YtDlpError, type YtDlpEngine } from '../engines/ytdlp/ytdlp.engine';
import { JobFailure } from '../lib/job-failure';
import { throughEgress } from '../activities/step/egress-run';
import { keepAlive } from '../activities/step/heartbeat';
import { toFailure } from '../activities/source/source-facts';
import { checkedGet } from '../activities/source/checked-get';
import { selectItems } from './selection';
import type { BatchSelection, BatchSource } from './types';

/** The most a feed's body may be (a 100,000-item feed is about 30 MB). */
export const MAX_FEED_BYTES = 48 * 1024 * 1024;
/** An expansion's whole time: fetching, parsing, listing. */
export const EXPANSION_SECONDS = 90;

export interface ExpansionDeps {
  ytdlp: YtDlpEngine;
  egress: EgressProxy;
  storage: Storage;
  allowPrivateNetwork: boolean;
}

export interface ExpandInput {
  batchId: string;
  source: BatchSource;
  selection: BatchSelection;
}

export interface Expansion {
  /** The stored listing: `{items: CollectionItem[]}` under the batch's own name in storage. */
  file: string;
  count: number;
  note: string | null;
}

/** Where a batch's expanded items wait for the control worker that stores them. */
export const expansionFile = (storage: Pick<Storage, 'outputRelative'>, batchId: string): string => storage.outputRelative(`batch-${batchId}`, 'items.json');

export function createExpansionActivities(deps: ExpansionDeps) {
  /** The source URL's body when it is a feed, else null (it is for yt-dlp); follows redirects, each checked. */
  async function readFeed(url: string, signal: AbortSignal): Promise<CollectionListing | null> {
    let got;
    try {
      got = await checkedGet(url, { allowPrivate: deps.allowPrivateNetwork, signal, accept: 'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/html;q=0.5, */*;q=0.1' });
    } catch (err) {
      throw signal.aborted ? timedOut() : err;
    }
    const { res } = got;
    const type = res.headers['content-type'] ?? null;
    // media is for yt-dlp (a single file is a listing of one); only text is read whole
    if (type && /^(audio|video|image)\//i.test(type)) {
      res.destroy();
      return null;
    }
    let body: string;
    try {
      body = await readBody(res, MAX_FEED_BYTES);
    } catch {
      if (signal.aborted) throw timedOut();
      throw JobFailure.user('rejected', `The source is larger than ${MAX_FEED_BYTES / 1024 / 1024} MB, the limit on a feed`);
    }
    if (!looksLikeFeed(body, type)) return null;
    try {
      return parseFeed(body, got.url);
    } catch (err) {
      if (err instanceof CollectionError) throw JobFailure.user(err.kind, err.message);
      throw err;
    }
  }

  async function listSource(url: string, maxItems: number, signal: AbortSignal): Promise<CollectionListing> {
    const feed = await platformGate().hold(url, () => readFeed(url, signal), signal);
    if (feed) return feed;
    try {
      return await throughEgress(deps.egress, url, (proxyUrl) => deps.ytdlp.list(url, { proxyUrl, maxItems, signal }));
    } catch (err) {
      if (signal.aborted && err instanceof YtDlpError) throw timedOut();
      throw toFailure(err);
    }
  }

  return {
    /** Lists the source, selects its items (dates, order, count) and stores them; retried, it stores the same. */
    async expandBatchSource(input: ExpandInput): Promise<Expansion> {
      const stop = keepAlive();
      const cancel = Context.current().cancellationSignal;
      const signal = AbortSignal.any([cancel, AbortSignal.timeout(EXPANSION_SECONDS * 1000)]);
      try {
        const listing: CollectionListing =
          'urls' in input.source
            ? { title: null, items: input.source.urls.map((url): CollectionItem => ({ url, identity: url, title: null, publishedAt: null, duration: null, thumbnail: null })), truncated: null }
            : await listSource(input.source.url, input.selection.after || input.selection.before || input.selection.order === 'oldest' ? MAX_LISTED : input.selection.maxItems, signal);
        const { items, note } = selectItems(listing.items, input.selection, listing.truncated);
        const file = expansionFile(deps.storage, input.batchId);
        const abs = deps.storage.outputPath(file);
        await fs.mkdir(path.dirname(abs), { recursive: true });
        await fs.writeFile(abs, JSON.stringify({ items }));
        await deps.storage.commitOutput(file);
        return { file, count: items.length, note };
      } finally {
        stop();
      }
    },
  };
}

/** What yt-dlp lists at most when the selection needs the whole source (dates, oldest first). */
const MAX_LISTED = 20_000;

function timedOut(): JobFailure {
  return JobFailure.user('unavailable', `Expanding the source took longer than ${EXPANSION_SECONDS} s and was stopped`);
}

export type ExpansionActivities = ReturnType<typeof createExpansionActivities>;
