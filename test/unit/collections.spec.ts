import assert from 'node:assert/strict';
import { decodeEntities, looksLikeFeed, parseDuration, parseFeed } from '../../engines/collections/feed';
import { flatListing } from '../../engines/ytdlp/ytdlp.engine';
import { selectItems } from '../../batches/selection';
import { itemJobId } from '../../batches/activities';
import { runsNow } from '../../subscriptions/activities';
import type { CollectionItem } from '../../engines/collections/collection';

const item = (identity: string, publishedAt: string | null): CollectionItem => ({ url: `https://example.com/${identity}`, identity, title: identity, publishedAt, duration: null, thumbnail: null });

describe('collections: feeds, flat listings and which items a batch takes', () => {
  it('reads an Atom feed: the enclosure link, else the alternate one; id, published (else updated), relative links resolved', () => {
    const atom = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Talks</title>
      <entry><id>tag:a,1</id><title>One &lt;live&gt;</title><published>2026-10-01T10:00:00Z</published><link rel="alternate" href="/talks/1"/><link rel="enclosure" href="/talks/1.mp3"/></entry>
      <entry><id>tag:a,2</id><title>Two</title><updated>2026-10-02T10:00:00+02:00</updated><link href="https://cdn.example.com/2.mp4"/></entry></feed>`;
    const { title, items } = parseFeed(atom, 'https://example.com/feed.atom');
    assert.equal(title, 'Talks');
    assert.deepEqual(items.map((i) => [i.url, i.identity, i.title, i.publishedAt]), [
      ['https://example.com/talks/1.mp3', 'tag:a,1', 'One <live>', '2026-10-01T10:00:00.000Z'],
      ['https://cdn.example.com/2.mp4', 'tag:a,2', 'Two', '2026-10-02T08:00:00.000Z'],
    ]);
  });

  it('refuses a document that declares entities, without expanding any; leaves undeclared ones as written', () => {
    assert.throws(() => parseFeed('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss><channel><item><title>&x;</title></item></channel></rss>', 'https://e.com/f'), /declares XML entities/);
    assert.equal(decodeEntities('a &amp; b &#233; &#x1F600; &nbsp; &bogus;'), 'a & b é 😀 &nbsp; &bogus;');
  });

  it('takes only http(s) enclosures, and tells feeds from pages and media', () => {
    const rss = '<rss><channel><item><enclosure url="file:///etc/passwd"/></item><item><enclosure url="javascript:alert(1)"/><link>ftp://x/y</link></item><item><link>https://e.com/ok</link></item></channel></rss>';
    assert.deepEqual(parseFeed(rss, 'https://e.com/f').items.map((i) => i.url), ['https://e.com/ok']);
    assert.ok(looksLikeFeed('\uFEFF<?xml version="1.0"?>\n<!-- c --><rss version="2.0">', 'text/xml'));
    assert.ok(looksLikeFeed('<feed xmlns="http://www.w3.org/2005/Atom">', null));
    assert.ok(looksLikeFeed('<?xml version="1.0"?><rss version="2.0">', 'application/octet-stream'), 'a wrong content type: the body says');
    assert.ok(!looksLikeFeed('<!doctype html><html><body><rss>', 'text/html'));
  });

  it('reads iTunes durations as seconds, MM:SS or HH:MM:SS', () => {
    assert.deepEqual(['90', '01:30', '1:02:03', '12.5', 'soon', '1:2:3:4'].map(parseDuration), [90, 90, 3723, 12.5, null, null]);
  });

  it('lists what yt-dlp flat-lists: links to pages, media found in a page (its own URL, not the page), one video as one item', () => {
    const playlist = JSON.stringify({ _type: 'playlist', title: 'Channel', entries: [
      { _type: 'url', url: 'https://v.example/watch?v=1', id: '1', title: 'A', duration: 61, upload_date: '20261001' },
      { id: 'page-2', url: 'https://cdn.example/2.mp4', webpage_url: 'https://page.example/', title: 'B', timestamp: 1793000000 },
      { _type: 'url', url: 'not a url' },
    ] });
    const listing = flatListing(playlist, 'https://v.example/c', 1);
    assert.deepEqual(listing.items.map((i) => [i.url, i.identity, i.publishedAt]), [['https://v.example/watch?v=1', '1', '2026-10-01T00:00:00.000Z']]);
    assert.match(listing.truncated!, /more than 1 items/);
    assert.equal(flatListing(playlist, 'https://v.example/c', 10).items[1]!.url, 'https://cdn.example/2.mp4');
    const one = flatListing(JSON.stringify({ id: 'x', title: 'Solo', webpage_url: 'https://v.example/watch?v=x' }), 'https://v.example/watch?v=x', 10);
    assert.deepEqual(one.items.map((i) => i.url), ['https://v.example/watch?v=x']);
  });

  it('selects by date (undated items outside any bound), newest or oldest first, one item per identity, at most max_items with a note', () => {
    const listed = [item('c', '2026-10-03T00:00:00Z'), item('undated', null), item('a', '2026-10-01T00:00:00Z'), item('b', '2026-10-02T00:00:00Z'), item('a', '2026-10-01T00:00:00Z')];
    const all = { maxItems: 10, after: null, before: null, order: 'newest' as const };
    assert.deepEqual(selectItems(listed, all, null).items.map((i) => i.identity), ['c', 'b', 'a', 'undated']);
    assert.deepEqual(selectItems(listed, { ...all, order: 'oldest' }, null).items.map((i) => i.identity), ['a', 'b', 'c', 'undated']);
    assert.deepEqual(selectItems(listed, { ...all, after: '2026-10-01T00:00:00Z', before: '2026-10-03T00:00:00Z' }, null).items.map((i) => i.identity), ['b']);
    const capped = selectItems(listed, { ...all, maxItems: 2 }, 'the source lists more');
    assert.deepEqual(capped.items.map((i) => i.identity), ['c', 'b']);
    assert.equal(capped.note, 'the source lists more; 4 items matched; the first 2 were taken (max_items, or the plan\'s limit on one batch)');
  });

  it("gives each item a fixed job id (a version 8 UUID) and runs a subscription's new items by their date, undated ones after the first check", () => {
    const id = itemJobId('00000000-0000-4000-8000-000000000001', 7);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(itemJobId('00000000-0000-4000-8000-000000000001', 7), id);
    assert.notEqual(itemJobId('00000000-0000-4000-8000-000000000001', 8), id);
    const start = new Date('2026-10-02T00:00:00Z');
    assert.deepEqual([item('old', '2026-10-01T00:00:00Z'), item('new', '2026-10-03T00:00:00Z'), item('undated', null)].map((i) => [runsNow(i, start, true), runsNow(i, start, false)]), [[false, false], [true, true], [false, true]]);
  });
});
