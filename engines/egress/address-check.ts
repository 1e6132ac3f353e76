// The one address check of every outbound connection made for a user: resolve the name, check each
// address against lib/address-policy, and connect only to an address that passed. The egress proxy
// (yt-dlp, ffmpeg) and the Node-side clients (direct media, PeerTube, webhooks) all use it.
import dnsCb from 'node:dns';
import dns from 'node:dns/promises';
import net from 'node:net';
import { addressProblem, urlHost } from '../../lib/address-policy';

/** A refused destination: its message is the sentence a user sees in error_message or a 422. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`The source tried to reach a private or reserved address (${address}), which is not allowed`);
    this.name = 'EgressRefusedError';
  }

  /** The refusal said of a target the service calls (a webhook endpoint) rather than a source. */
  targetSentence(): string {
    return this.host === this.address
      ? `${this.address} is a private or reserved address, which is not allowed`
      : `${this.host} resolves to ${this.address}, a private or reserved address, which is not allowed`;
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves `host` (a name or an IP literal) and returns the addresses that may be connected to.
 * Refuses the whole name when any of its addresses is not public: a name that mixes public and
 * private answers is treated as hostile. Throws EgressRefusedError, or the resolver's error.
 */
export async function resolveAllowed(host: string, allowPrivate: boolean): Promise<ResolvedAddress[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  const family = net.isIP(bare);
  const list: ResolvedAddress[] = family
    ? [{ address: bare, family: family as 4 | 6 }]
    : (await dns.lookup(bare, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
  if (!allowPrivate) {
    for (const a of list) {
      const problem = addressProblem(a.address);
      if (problem) throw new EgressRefusedError(bare, a.address, problem);
    }
  }
  if (list.length === 0) throw Object.assign(new Error(`${bare} does not resolve`), { code: 'ENOTFOUND' });
  return list;
}

export type UrlCheck = { ok: true } | { ok: false; reason: string };

/**
 * An early check of a URL's host (DNS included) for a clear 422 at creation. It is advisory: the
 * binding check is the one at connect time, since DNS answers can change in between.
 */
export async function checkUrlAddress(url: string, allowPrivate: boolean): Promise<UrlCheck> {
  if (allowPrivate) return { ok: true };
  const { host } = urlHost(url);
  try {
    await resolveAllowed(host, false);
    return { ok: true };
  } catch (err) {
    if (err instanceof EgressRefusedError) {
      return { ok: false, reason: host === err.address ? `points to ${err.address}, a private or reserved address, which is not allowed` : `resolves to ${err.address}, a private or reserved address, which is not allowed` };
    }
    return { ok: false, reason: `host ${host} does not resolve` };
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dnsCb.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for Node's http/https/net that runs resolveAllowed: the address checked is the address
 * the socket connects to, so an answer that changes after an earlier check (rebinding) cannot pass.
 * IP literals skip `lookup` in Node: callers check those with resolveAllowed first.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dnsCb.LookupOptions, callback: LookupCallback) => {
    resolveAllowed(hostname, allowPrivate).then(
      (list) => {
        if (options.all) return callback(null, list);
        callback(null, list[0]!.address, list[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
