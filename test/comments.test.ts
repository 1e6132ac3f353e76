import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCommentsActivities, type ExtractCommentsInput } from '../operations/comments/activities';
import { createPeerTubeProvider, peerTubeVideoId } from '../engines/comments/peertube';
import { CommentsError, type Comment, type CommentsFile, type CommentsProvider } from '../engines/comments/provider';
import { createYtDlpCommentsProvider } from '../engines/comments/ytdlp-comments';
import { loadConfig } from '../lib/config';
import { USER_FAILURE_TYPES } from '../lib/job-failure';
import { testEgress } from './helpers/egress';
import { LocalStorage, Storage } from '../engines/storage';
import { expectNonRetryable, runActivity } from './helpers/activity-env';
import { peerTubeExpected, peerTubeOrder, PT_DELETED_ROOTS, PT_THREADS, PT_VIDEOS, startPeerTubeFixture, type PeerTubeFixture } from './helpers/peertube-fixture';
import { startYtcFixture, YTC_BASE_TS, YTC_THREADS, ytcLikes, ytcThreads, YTDLP_PLUGIN_DIR, type YtcFixture } from './helpers/ytdlp-comments-fixture';

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const COMMENT_KEYS = ['author', 'author_url', 'id', 'is_pinned', 'like_count', 'replies', 'text', 'timestamp'];
const REPLY_KEYS = ['author', 'author_url', 'id', 'like_count', 'text', 'timestamp'];

/** Every comment and reply has exactly the documented fields, with their types. */
function assertShape(file: CommentsFile): void {
  assert.deepEqual(Object.keys(file).sort(), ['comment_count', 'comments', 'title', 'url']);
  let n = 0;
  for (const c of file.comments) {
    assert.deepEqual(Object.keys(c).sort(), COMMENT_KEYS);
    assert.equal(typeof c.id, 'string');
    assert.equal(typeof c.text, 'string');
    assert.equal(typeof c.author, 'string');
    assert.equal(typeof c.author_url, 'string');
    assert.ok(Number.isInteger(c.like_count) && c.like_count >= 0);
    assert.match(c.timestamp!, ISO_UTC);
    assert.equal(typeof c.is_pinned, 'boolean');
    n++;
    for (const r of c.replies) {
      assert.deepEqual(Object.keys(r).sort(), REPLY_KEYS);
      assert.ok(Number.isInteger(r.like_count) && r.like_count >= 0);
      assert.match(r.timestamp!, ISO_UTC);
      n++;
    }
    const times = c.replies.map((r) => Date.parse(r.timestamp!));
    assert.deepEqual(times, [...times].sort((a, b) => a - b), `replies of ${c.id} are oldest first`);
  }
  assert.equal(file.comment_count, n);
}

describe('comments operation: providers and the extractComments activity', function () {
  let dataDir: string;
  let storage: Storage;
  let n = 0;

  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-comments-'));
    storage = new LocalStorage(loadConfig({ DATA_DIR: dataDir }));
  });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** Runs the extractComments activity and reads back the file it wrote. */
  async function extract(providers: CommentsProvider[], url: string, over: Partial<ExtractCommentsInput> = {}) {
    const acts = createCommentsActivities({ providers, storage, egress: await testEgress(), config: { allowPrivateNetwork: true } });
    const jobId = `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    const out = await runActivity(acts.extractComments, { jobId, url, maxComments: 100, sort: 'top', includeReplies: true, progressRange: [0, 99], ...over });
    assert.equal(out.outputFile, path.join(jobId, 'comments.json'));
    const file = JSON.parse(fs.readFileSync(storage.outputPath(out.outputFile), 'utf8')) as CommentsFile;
    assertShape(file);
    const replies = file.comments.reduce((s, c) => s + c.replies.length, 0);
    assert.deepEqual(out.resultData, { title: file.title, comment_count: file.comment_count, top_level_count: file.comments.length, reply_count: replies, sort: over.sort ?? 'top' });
    assert.equal(file.url, url);
    return file;
  }

  describe('PeerTube provider against a PeerTube fixture instance', () => {
    let pt: PeerTubeFixture;
    let provider: CommentsProvider;
    const expected = peerTubeExpected();
    const alive = (sort: '-createdAt' | '-totalReplies', includeReplies = true) =>
      peerTubeOrder(expected, sort).filter((t) => !t.deleted || (includeReplies && t.totalReplies > 0));
    const threadRequests = () => pt.requests.filter((r) => /comment-threads\?/.test(r));
    const treeRequests = () => pt.requests.filter((r) => /comment-threads\/\d+/.test(r));

    before(async () => {
      pt = await startPeerTubeFixture();
      provider = createPeerTubeProvider({ allowPrivateNetwork: true });
    });
    after(() => pt?.close());
    beforeEach(() => (pt.requests.length = 0));

    it('recognises /w/ID and /videos/watch/ID on a PeerTube host by asking /api/v1/config once (cached)', async () => {
      assert.equal(peerTubeVideoId(pt.url(`/w/${PT_VIDEOS.big.shortUUID}`)), PT_VIDEOS.big.shortUUID);
      assert.equal(peerTubeVideoId(pt.url(`/videos/watch/${PT_VIDEOS.big.uuid}`)), PT_VIDEOS.big.uuid);
      assert.equal(peerTubeVideoId(pt.url('/watch?v=abc')), null);
      assert.equal(await provider.handles(pt.url(`/w/${PT_VIDEOS.big.shortUUID}`)), true);
      assert.equal(await provider.handles(pt.url(`/videos/watch/${PT_VIDEOS.big.uuid}`)), true);
      assert.equal(await provider.handles(pt.url('/feeds/videos.xml')), false);
      assert.deepEqual(pt.requests, ['/api/v1/config'], 'one config request for the host, none for other paths');

      const other = await startYtcFixture(); // not PeerTube: /api/v1/config is a 404 there
      try {
        assert.equal(await provider.handles(other.url('/w/abc')), false);
        assert.equal(await provider.handles(other.url('/videos/watch/abc')), false);
      } finally {
        await other.close();
      }
    });

    it('newest, max_comments=1000: pages of at most 100 with -createdAt, threads newest first, full reply trees oldest first', async () => {
      const file = await extract([provider], pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), { maxComments: 1000, sort: 'newest' });
      assert.equal(file.title, PT_VIDEOS.big.name);
      const want = alive('-createdAt').slice(0, 1000);
      assert.equal(file.comments.length, 1000);
      assert.deepEqual(file.comments.map((c) => c.id), want.map((t) => t.id));
      for (const [i, c] of file.comments.entries()) {
        const t = want[i]!;
        assert.equal(c.timestamp, t.timestamp);
        assert.equal(c.text, t.text);
        assert.equal(c.like_count, 0);
        assert.equal(c.is_pinned, false);
        assert.deepEqual(c.replies.map((r) => [r.id, r.text, r.timestamp]), t.replies.map((r) => [r.id, r.text, r.timestamp]));
      }
      assert.equal(file.comment_count, want.reduce((s, t) => s + 1 + t.replies.length, 0));

      // pagination: contiguous pages, count ≤ 100, the documented sort
      const pages = threadRequests().map((r) => new URL(r, 'http://x').searchParams);
      let start = 0;
      for (const q of pages) {
        assert.equal(Number(q.get('start')), start);
        assert.ok(Number(q.get('count')) <= 100 && Number(q.get('count')) >= 1);
        assert.equal(q.get('sort'), '-createdAt');
        start += Number(q.get('count'));
      }
      assert.ok(pages.length >= 10 && pages.length <= 11, String(pages.length));
      // one thread request per kept thread with replies, none for the others
      assert.equal(treeRequests().length, want.filter((t) => t.totalReplies > 0).length);
    });

    it('flattens deeper levels oldest first and handles deleted comments (tombstones)', async () => {
      const file = await extract([provider], pt.url(`/videos/watch/${PT_VIDEOS.big.uuid}`), { maxComments: 1000, sort: 'newest' });
      const byId = new Map(file.comments.map((c) => [c.id, c]));
      // thread 1190: depth-first a,b,c,d,e; oldest first a,b,d,e,c
      assert.deepEqual(byId.get('1190')!.replies.map((r) => r.text), ['a', 'b', 'd', 'e', 'c'].map((k) => `Reply ${k} in thread 1190`));
      // thread 600: its root is deleted but its replies keep the thread: a placeholder
      const t600 = byId.get('600')!;
      assert.deepEqual([t600.text, t600.author, t600.author_url, t600.like_count], ['', '', '', 0]);
      assert.equal(t600.replies.length, 5);
      // thread 1199: deleted without replies: left out
      assert.ok(PT_DELETED_ROOTS.has(1199) && !byId.has('1199'));
      // thread 300: reply b is deleted (left out), its own reply c stays
      const t300 = byId.get('300')!;
      assert.deepEqual(t300.replies.map((r) => r.text), ['a', 'd', 'e', 'c'].map((k) => `Reply ${k} in thread 300`));
      // authors come from the account; remote accounts keep their URL
      assert.equal(byId.get('1200')!.author, `User ${1200 % 97}`);
      assert.equal(byId.get('1200')!.author_url, `http://${pt.host}/accounts/user${1200 % 97}`);
      assert.match(t300.replies[0]!.author_url, /^http:\/\/remote\.example\/accounts\/user\d+$/);
    });

    it('top: PeerTube has no likes, so -totalReplies order (ties newest first)', async () => {
      const file = await extract([provider], pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), { maxComments: 150, sort: 'top' });
      const want = alive('-totalReplies').slice(0, 150);
      assert.deepEqual(file.comments.map((c) => c.id), want.map((t) => t.id));
      assert.ok(file.comments.every((c) => c.like_count === 0));
      assert.deepEqual(threadRequests().map((r) => new URL(r, 'http://x').searchParams.get('count')), ['100', '50']);
      assert.ok(threadRequests().every((r) => r.includes('sort=-totalReplies')));
      assert.equal(file.comments[0]!.replies.length, want[0]!.totalReplies);
    });

    it('max_comments=1 asks for one thread only', async () => {
      const file = await extract([provider], pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), { maxComments: 1, sort: 'newest' });
      assert.equal(file.comments.length, 1);
      assert.equal(file.comments[0]!.id, String(PT_THREADS));
      assert.deepEqual(threadRequests(), [`/api/v1/videos/${PT_VIDEOS.big.uuid}/comment-threads?start=0&count=1&sort=-createdAt`]);
    });

    it('include_replies=false leaves every replies array empty and fetches no thread trees', async () => {
      const file = await extract([provider], pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), { maxComments: 1000, sort: 'newest', includeReplies: false });
      assert.equal(file.comments.length, 1000);
      assert.ok(file.comments.every((c) => Array.isArray(c.replies) && c.replies.length === 0));
      assert.equal(file.comment_count, 1000);
      assert.equal(treeRequests().length, 0);
      // deleted threads carry nothing without their replies
      assert.ok(!file.comments.some((c) => PT_DELETED_ROOTS.has(Number(c.id))));
      assert.deepEqual(file.comments.map((c) => c.id), alive('-createdAt', false).slice(0, 1000).map((t) => t.id));
    });

    it('a video with 0 comments gives an empty file; disabled comments and unknown videos fail the job', async () => {
      const file = await extract([provider], pt.url(`/w/${PT_VIDEOS.empty.shortUUID}`), { maxComments: 1000 });
      assert.deepEqual([file.title, file.comment_count, file.comments], [PT_VIDEOS.empty.name, 0, []]);
      await expectNonRetryable(extract([provider], pt.url(`/w/${PT_VIDEOS.closed.shortUUID}`)), USER_FAILURE_TYPES.unavailable, /Comments are disabled/);
      await expectNonRetryable(extract([provider], pt.url('/w/doesNotExist')), USER_FAILURE_TYPES.unavailable, /answered 404/);
    });

    it('its HTTP calls obey the private-address rule', async () => {
      const strict = createPeerTubeProvider({ allowPrivateNetwork: false });
      await assert.rejects(strict.extract({ url: pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), maxComments: 1, sort: 'top', includeReplies: false, proxyUrl: 'http://127.0.0.1:9' }), (err: unknown) => {
        assert.ok(err instanceof CommentsError);
        assert.match(err.message, /private or reserved address/);
        return true;
      });
      await assert.rejects(strict.handles(pt.url('/w/abc')), /private or reserved address/);
      assert.deepEqual(pt.requests, []);
    });
  });

  describe('yt-dlp provider: the real yt-dlp with a test-only plugin extractor', () => {
    let fx: YtcFixture;
    const config = loadConfig({});
    const provider = createYtDlpCommentsProvider({ binary: config.ytdlpPath, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, pluginDirs: [YTDLP_PLUGIN_DIR] });
    const lastQuery = () => fx.commentQueries[fx.commentQueries.length - 1]!;

    before(async () => {
      fx = await startYtcFixture();
    });
    after(() => fx?.close());

    it('top, max_comments=10: passes limit and sort as extractor args, maps the flat list to the tree', async () => {
      const file = await extract([provider], fx.url('/ytc/watch/ytc1'), { maxComments: 10, sort: 'top' });
      assert.equal(lastQuery().get('raw_max_comments'), 'all,10,all');
      assert.equal(lastQuery().get('sort'), 'top');
      assert.equal(lastQuery().get('max_parents'), '10');
      const host = new URL(fx.baseUrl).host;
      const threads = ytcThreads(host);
      const want = [...threads].sort((a, b) => (b.top.like_count ?? 0) - (a.top.like_count ?? 0)).slice(0, 10);
      assert.equal(file.title, 'Plugin Fixture — comments “quoted” & ünïcode');
      assert.deepEqual(file.comments.map((c) => c.id), want.map((t) => t.top.id));
      assert.deepEqual(file.comments.map((c) => c.like_count), want.map((t) => t.top.like_count));
      for (const [i, c] of file.comments.entries()) {
        const t = want[i]!;
        assert.equal(c.text, t.top.text);
        assert.equal(c.author, t.top.author);
        assert.equal(c.author_url, t.top.author_url ?? '');
        assert.equal(c.timestamp, new Date(t.top.timestamp! * 1000).toISOString());
        assert.deepEqual(c.replies.map((r) => r.id), t.replies.map((r) => String(r.id)));
        assert.deepEqual(c.replies.map((r) => r.like_count), t.replies.map((r) => r.like_count ?? 0));
      }
    });

    it('newest, max_comments=1000: every thread newest first; nested replies flattened oldest first; unknowns mapped', async () => {
      const file = await extract([provider], fx.url('/ytc/watch/ytc1'), { maxComments: 1000, sort: 'newest' });
      assert.equal(lastQuery().get('raw_max_comments'), 'all,1000,all');
      assert.equal(lastQuery().get('sort'), 'new');
      assert.equal(file.comments.length, YTC_THREADS, 'fewer than asked is fine');
      assert.deepEqual(file.comments.map((c) => c.id), Array.from({ length: YTC_THREADS }, (_, i) => `c${YTC_THREADS - 1 - i}`));
      const byId = new Map<string, Comment>(file.comments.map((c) => [c.id, c]));
      assert.equal(byId.get('c0')!.timestamp, new Date(YTC_BASE_TS * 1000).toISOString());
      assert.equal(byId.get('c0')!.timestamp, '2023-11-14T22:13:20.000Z');
      // c2: r1 (+60 s), r0 (+120 s), and r0's own reply (+150 s), in one flat list
      assert.deepEqual(byId.get('c2')!.replies.map((r) => r.id), ['c2.r1', 'c2.r0', 'c2.r0.n0']);
      assert.equal(byId.get('c5')!.like_count, 0, 'unknown likes are 0');
      assert.equal(ytcLikes(5), null);
      assert.equal(byId.get('c4')!.author_url, '', 'unknown author_url is empty');
      assert.deepEqual(file.comments.filter((c) => c.is_pinned).map((c) => c.id), ['c7']);
      assert.ok(!file.comments.some((c) => c.replies.some((r) => r.id === 'orphan')), 'a reply without its thread is dropped');
      const replies = Array.from({ length: YTC_THREADS }, (_, i) => i % 4).reduce((a, b) => a + b, 0) + 1;
      assert.equal(file.comment_count, YTC_THREADS + replies);
    });

    it('max_comments=1 and include_replies=false: one comment, no replies, max-replies 0 passed', async () => {
      const file = await extract([provider], fx.url('/ytc/watch/ytc1'), { maxComments: 1, sort: 'top', includeReplies: false });
      assert.equal(lastQuery().get('raw_max_comments'), 'all,1,0');
      assert.equal(file.comments.length, 1);
      assert.equal(file.comments[0]!.id, `c${[...Array(YTC_THREADS).keys()].sort((a, b) => (ytcLikes(b) ?? 0) - (ytcLikes(a) ?? 0))[0]}`);
      assert.deepEqual(file.comments[0]!.replies, []);
      const all = await extract([provider], fx.url('/ytc/watch/ytc1'), { maxComments: 1000, sort: 'top', includeReplies: false });
      assert.ok(all.comments.every((c) => c.replies.length === 0));
      assert.equal(all.comment_count, YTC_THREADS);
    });

    it('no comments is an empty file; disabled comments and platforms without comment support fail', async () => {
      const empty = await extract([provider], fx.url('/ytc/watch/ytc-empty'));
      assert.deepEqual([empty.comment_count, empty.comments], [0, []]);
      await expectNonRetryable(extract([provider], fx.url('/ytc/watch/ytc-off')), USER_FAILURE_TYPES.unavailable, /Comments are disabled/);
      await expectNonRetryable(extract([provider], fx.url('/ytc/media/clip.mp4')), USER_FAILURE_TYPES.unsupported, /Comments are not supported for this platform/);
    });

    it('the job picks the provider by URL: PeerTube hosts over the API, anything else through yt-dlp', async () => {
      const pt = await startPeerTubeFixture();
      try {
        const providers = [createPeerTubeProvider({ allowPrivateNetwork: true }), provider];
        const a = await extract(providers, pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), { maxComments: 3, sort: 'newest' });
        assert.deepEqual(a.comments.map((c) => c.id), ['1200', '1198', '1197']);
        const before = fx.commentQueries.length;
        const b = await extract(providers, fx.url('/ytc/watch/ytc1'), { maxComments: 2, sort: 'newest' });
        assert.deepEqual(b.comments.map((c) => c.id), ['c39', 'c38']);
        assert.equal(fx.commentQueries.length, before + 1);
      } finally {
        await pt.close();
      }
    });
  });
});
