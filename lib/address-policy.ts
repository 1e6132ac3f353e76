// Which addresses and URLs the service may reach for a user. Pure: no DNS, no sockets. The egress
// path (engines/egress) applies addressProblem() to the address it actually connects to.
import ipaddr from 'ipaddr.js';

/** Local-use NAT64 (RFC 8215): what it maps to depends on the network, so it is never public. */
const LOCAL_NAT64 = ipaddr.parseCIDR('64:ff9b:1::/48');
/** 6to4 relay anycast: ipaddr.js calls it reserved, listed to make the intent explicit. */
const SIX_TO_FOUR_RELAY = ipaddr.parseCIDR('192.88.99.0/24');

/**
 * Why connecting to `ip` for a user is not allowed, or null when it is a public unicast address.
 * IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64 64:ff9b::/96, 6to4) are judged by
 * the embedded address; Teredo and local-use NAT64 are refused whatever they embed.
 */
export function addressProblem(ip: string): string | null {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return `${ip} is not an IP address`;
  }
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.match(LOCAL_NAT64)) return `${ip} is a local-use NAT64 address`;
    const embedded = embeddedIPv4(v6);
    if (embedded) return addressProblem(embedded.toString()) === null ? null : `${ip} embeds ${embedded.toString()}, a private or reserved address`;
    return v6.range() === 'unicast' ? null : `${ip} is a ${describe(v6.range())} address`;
  }
  const v4 = addr as ipaddr.IPv4;
  if (v4.match(SIX_TO_FOUR_RELAY)) return `${ip} is the 6to4 relay anycast range`;
  return v4.range() === 'unicast' ? null : `${ip} is a ${describe(v4.range())} address`;
}

/** The IPv4 address inside an IPv6 address that carries one, or null. */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = v6.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const range = v6.range();
  // ::ffff:a.b.c.d, ::a.b.c.d (IPv4-compatible; ipaddr.js reports both as ipv4Mapped), ::ffff:0:a.b.c.d
  if (range === 'ipv4Mapped' || range === 'rfc6145') return v4(p[6]!, p[7]!);
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!);
  // 64:ff9b::a.b.c.d (well-known NAT64 prefix)
  if (range === 'rfc6052') return v4(p[6]!, p[7]!);
  // 2002:AABB:CCDD::/48 (6to4)
  if (range === '6to4') return v4(p[1]!, p[2]!);
  return null;
}

function describe(range: string): string {
  const names: Record<string, string> = {
    loopback: 'loopback',
    private: 'private',
    linkLocal: 'link-local',
    carrierGradeNat: 'carrier-grade NAT',
    multicast: 'multicast',
    broadcast: 'broadcast',
    unspecified: 'unspecified',
    uniqueLocal: 'unique-local (private)',
    teredo: 'Teredo tunnel',
    reserved: 'reserved',
  };
  return names[range] ?? `non-public (${range})`;
}

const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff]/;

/**
 * Why `raw` is not an acceptable http(s) URL for the service to fetch or call, or null. Only the
 * canonical form (canonicalUrl) is ever stored or handed to a tool, so every parser sees one host.
 */
export function urlSyntaxProblem(raw: string): string | null {
  if (CONTROL_OR_SPACE.test(raw)) return 'must not contain spaces or control characters';
  if (raw.includes('\\')) return 'must not contain a backslash';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must use http or https, not ${url.protocol.replace(/:$/, '')}`;
  if (url.username || url.password || /^[a-z]+:\/\/[^/?#]*@/i.test(raw)) return 'must not contain a user name or password';
  if (!url.hostname) return 'has no host';
  // DNS limits (RFC 1035): a longer name can never resolve, and resolvers answer it with odd errors
  if (!url.hostname.startsWith('[')) {
    const name = url.hostname.replace(/\.$/, '');
    if (name.length > 253) return 'has a host name longer than 253 characters';
    if (name.split('.').some((label) => label.length === 0 || label.length > 63)) return 'has a host name with an empty label or one longer than 63 characters';
  }
  return null;
}

/** The one spelling of a URL that is stored and passed on (WHATWG `href`). Call after urlSyntaxProblem. */
export function canonicalUrl(raw: string): string {
  return new URL(raw).href;
}

/** The host of a URL without IPv6 brackets, and whether it is an IP literal. */
export function urlHost(url: string): { host: string; literal: boolean } {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return { host, literal: ipaddr.isValid(host) && (host.includes(':') || /^\d+\.\d+\.\d+\.\d+$/.test(host)) };
}
