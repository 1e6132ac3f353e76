// Podcast RSS and Atom feeds: their items, with enclosures, guids, dates and iTunes durations.
// The XML is hostile until proven otherwise: a document that declares entities is refused before it
// is parsed (no external entity is resolved, no entity bomb expanded), and only the five predefined
// entities and character references are decoded, by hand.
import { XMLParser } from 'fast-xml-parser';
import { CollectionError, type CollectionItem, type CollectionListing } from './collection';

/** True when the body looks like an RSS or Atom document rather than a web page or a media file. */
export function looksLikeFeed(body: string, contentType: string | null): boolean {
  const start = body.slice(0, 2048).replace(/^\uFEFF/, '').trimStart();
  if (/^<(rss|feed|rdf:RDF)[\s>]/i.test(start.replace(/^<\?xml[^>]*\?>\s*/i, '').replace(/^(<!--[\s\S]*?-->\s*)*/, ''))) return true;
  return /(rss|atom)\+xml/i.test(contentType ?? '') || (/^<\?xml/i.test(start) && /<(rss|feed)[\s>]/i.test(body.slice(0, 8192)));
}

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The text with the predefined entities and character references decoded; any other entity stays as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return PREDEFINED[name] ?? whole;
  });
}

type Node = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  isArray: (name) => ['item', 'entry', 'link', 'enclosure', 'media:content'].includes(name),
});

function text(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return decodeEntities(v).trim() || null;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'object' && '#text' in (v as Node)) return text((v as Node)['#text']);
  return null;
}

function attr(v: unknown, name: string): string | null {
  return v && typeof v === 'object' ? text((v as Node)[`@${name}`]) : null;
}

/** iTunes durations: seconds, MM:SS or HH:MM:SS. */
export function parseDuration(v: string | null): number | null {
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const parts = v.split(':');
  if (parts.length > 3 || !parts.every((p) => /^\d{1,2}(\.\d+)?$|^\d+$/.test(p))) return null;
  return parts.reduce((sum, p) => sum * 60 + Number(p), 0);
}

function isoDate(v: string | null): string | null {
  if (!v) return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
}

/** An absolute http(s) URL, resolved against the feed's own; null for anything else. */
function absolute(v: string | null, base: string): string | null {
  if (!v) return null;
  try {
    const u = new URL(v, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : null;
  } catch {
    return null;
  }
}

function rssItem(item: Node, base: string): CollectionItem | null {
  const enclosure = (item.enclosure as Node[] | undefined)?.find((e) => attr(e, 'url')) ?? (item['media:content'] as Node[] | undefined)?.find((e) => attr(e, 'url'));
  const links = (item.link as unknown[] | undefined) ?? [];
  const url = absolute(attr(enclosure, 'url'), base) ?? absolute(links.map(text).find(Boolean) ?? null, base);
  if (!url) return null;
  return {
    url,
    identity: text(item.guid) ?? url,
    title: text(item.title),
    publishedAt: isoDate(text(item.pubDate) ?? text(item['dc:date'])),
    duration: parseDuration(text(item['itunes:duration'])),
    thumbnail: absolute(attr(item['itunes:image'], 'href') ?? attr(item['media:thumbnail'], 'url'), base),
  };
}

function atomEntry(entry: Node, base: string): CollectionItem | null {
  const links = ((entry.link as Node[] | undefined) ?? []).filter((l) => attr(l, 'href'));
  const pick = links.find((l) => attr(l, 'rel') === 'enclosure') ?? links.find((l) => (attr(l, 'rel') ?? 'alternate') === 'alternate') ?? links[0];
  const url = absolute(attr(pick, 'href'), base);
  if (!url) return null;
  return {
    url,
    identity: text(entry.id) ?? url,
    title: text(entry.title),
    publishedAt: isoDate(text(entry.published) ?? text(entry.updated)),
    duration: parseDuration(text(entry['itunes:duration'])),
    thumbnail: absolute(attr(entry['media:thumbnail'], 'url'), base),
  };
}

/**
 * A feed's items, in the feed's order (its size is bounded by the body's, which the reader caps).
 * Throws CollectionError for a document that declares entities or is not a feed.
 */
export function parseFeed(xml: string, feedUrl: string): CollectionListing {
  // a DOCTYPE may declare entities (the "billion laughs") or point at external ones: neither is a feed's business
  if (/<!DOCTYPE/i.test(xml) && /<!ENTITY/i.test(xml)) throw new CollectionError('rejected', 'The feed declares XML entities, which this service does not expand');
  let doc: Node;
  try {
    doc = parser.parse(xml) as Node;
  } catch (err) {
    throw new CollectionError('unsupported', `The feed is not well-formed XML: ${(err as Error).message.split('\n')[0]}`);
  }
  const rss = (doc.rss as Node | undefined)?.channel as Node | undefined;
  const rdf = doc['rdf:RDF'] as Node | undefined;
  const atom = doc.feed as Node | undefined;
  let raw: Node[];
  let toItem: (n: Node, base: string) => CollectionItem | null;
  let title: string | null;
  if (rss || rdf) {
    raw = ((rss?.item ?? rdf?.item) as Node[] | undefined) ?? [];
    toItem = rssItem;
    title = text((rss ?? (rdf?.channel as Node | undefined))?.title);
  } else if (atom) {
    raw = (atom.entry as Node[] | undefined) ?? [];
    toItem = atomEntry;
    title = text(atom.title);
  } else {
    throw new CollectionError('unsupported', 'The document is XML but neither an RSS nor an Atom feed');
  }
  const items: CollectionItem[] = [];
  for (const node of raw) {
    const item = toItem(node, feedUrl);
    if (item) items.push(item);
  }
  return { title, items, truncated: null };
}
