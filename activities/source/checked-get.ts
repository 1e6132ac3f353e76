// A GET of a user's URL through the address checks, following redirects (each hop checked again):
// the one way a step reads a small document (a subtitle file, a feed) over HTTP.
import type http from 'node:http';
import { EgressRefusedError } from '../../engines/egress/address-check';
import { egressRequest } from '../../engines/egress/http-client';
import { JobFailure } from '../../lib/job-failure';

export const MAX_REDIRECTS = 5;

/**
 * The 200 answer at the end of the redirects, unread, and the URL it came from. A refused address, a
 * failed connection, any other status or too many redirects is the job's failure, said for a person.
 */
export async function checkedGet(url: string, opts: { allowPrivate: boolean; signal: AbortSignal; accept: string; timeoutMs?: number }): Promise<{ res: http.IncomingMessage; url: string }> {
  let target = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let res;
    try {
      res = await egressRequest({ url: target, method: 'GET', timeoutMs: opts.timeoutMs ?? 30_000, allowPrivate: opts.allowPrivate, traffic: 'source', signal: opts.signal, headers: { Accept: opts.accept } });
    } catch (err) {
      if (err instanceof EgressRefusedError) throw JobFailure.user('rejected', `The source address is not allowed: ${err.message}`);
      throw JobFailure.user('unavailable', `The source could not be fetched: ${(err as Error).message}`);
    }
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      target = new URL(res.headers.location, target).toString();
      continue;
    }
    if (status === 429) {
      res.resume();
      // the site refuses the service, not this document: its platform's breaker counts it
      throw JobFailure.refused('The site is refusing requests from this service for now (HTTP 429 too many requests)');
    }
    if (status !== 200) {
      res.resume();
      throw JobFailure.user('unavailable', `The source is not available: the site answered HTTP ${status}`);
    }
    return { res, url: target };
  }
  throw JobFailure.user('unavailable', `The source redirects more than ${MAX_REDIRECTS} times`);
}
