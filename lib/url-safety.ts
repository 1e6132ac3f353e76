import dnsCb from 'node:dns';
import dns from 'node:dns/promises';
import net from 'node:net';

const blocked = new net.BlockList();
// loopback, private, link-local, CGNAT, multicast, and the unroutable blocks around them
for (const [addr, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(addr, prefix, 'ipv4');
}
for (const [addr, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(addr, prefix, 'ipv6');
}

/** True when an IP literal is loopback, private, link-local, CGNAT, multicast or otherwise not public. */
export function isPrivateAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = net.isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) return blocked.check(ip, 'ipv6');
  return true;
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** Checks scheme and syntax only; no DNS. */
export function checkUrlSyntax(raw: string): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'is not a valid absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: `must use http or https, not ${url.protocol.replace(':', '')}` };
  }
  if (!url.hostname) return { ok: false, reason: 'has no host' };
  return { ok: true, url };
}

/**
 * Resolves the URL's host and refuses it when any address is not public, unless private networks
 * are allowed. Resolution failures are refusals too: a host that does not resolve cannot be fetched.
 */
export async function checkUrlAddress(raw: string, allowPrivate: boolean): Promise<UrlCheck> {
  const syntax = checkUrlSyntax(raw);
  if (!syntax.ok || allowPrivate) return syntax;
  const host = syntax.url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (net.isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return { ok: false, reason: `host ${host} does not resolve` };
    }
  }
  const bad = addresses.find(isPrivateAddress);
  if (bad) return { ok: false, reason: `resolves to ${bad}, a private or reserved address, which is not allowed` };
  return syntax;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dnsCb.LookupAddress[], family?: number) => void;

/**
 * Resolves like dns.lookup but refuses private addresses: the check runs on the address the socket
 * will connect to, so a DNS answer that changes after validation (rebinding) cannot get around it.
 */
export function safeLookup(allowPrivate: boolean) {
  return (hostname: string, options: dnsCb.LookupOptions, callback: LookupCallback) => {
    dnsCb.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as dnsCb.LookupAddress[];
      const bad = list.find((a) => isPrivateAddress(a.address));
      if (bad && !allowPrivate) {
        const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${bad.address}, a private or reserved address, which is not allowed`);
        e.code = 'EADDRNOTALLOWED';
        return callback(e, '');
      }
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
