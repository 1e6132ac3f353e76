import assert from 'node:assert/strict';
import type { CommentsFile } from '../engines/comments/provider';
import { peerTubeExpected, peerTubeOrder, PT_VIDEOS, startPeerTubeFixture, type PeerTubeFixture } from './helpers/peertube-fixture';
import { startServeStack, type JobBody, type ServeStack } from './helpers/serve-stack';
import { startYtcFixture, YTC_THREADS, YTDLP_PLUGIN_DIR, type YtcFixture } from './helpers/ytdlp-comments-fixture';


describe('end to end: POST /v1/comments through serve (PeerTube API and yt-dlp providers)', function () {
  let pt: PeerTubeFixture;
  let ytc: YtcFixture;
  let s: ServeStack;

  const api = (method: string, p: string, body?: unknown) => s.api(method, p, body);
  const credits = () => s.credits();

  const waitJob = (jobId: string) => s.waitJob(jobId);

  async function fetchFile(job: JobBody): Promise<CommentsFile> {
    assert.ok(job.download_url);
    const res = await fetch(job.download_url); // no Authorization header
    assert.equal(res.status, 200);
    return (await res.json()) as CommentsFile;
  }

  before(async function () {
    pt = await startPeerTubeFixture();
    ytc = await startYtcFixture();
    s = await startServeStack({ name: 'comments-e2e', plan: 'starter', env: { YTDLP_PLUGIN_DIRS: YTDLP_PLUGIN_DIR } });
  });

  after(async () => {
    await s?.stop();
    await pt?.close();
    await ytc?.close();
  });

  it('rejects bad parameters with 422 and charges nothing', async () => {
    const before = await credits();
    for (const [body, field] of [
      [{ url: pt.url('/w/x'), max_comments: 0 }, 'max_comments'],
      [{ url: pt.url('/w/x'), max_comments: 1001 }, 'max_comments'],
      [{ url: pt.url('/w/x'), max_comments: 2.5 }, 'max_comments'],
      [{ url: pt.url('/w/x'), sort: 'oldest' }, 'sort'],
      [{ url: pt.url('/w/x'), include_replies: 'no' }, 'include_replies'],
      [{ max_comments: 5 }, 'url'],
    ] as const) {
      const res = await api('POST', '/v1/comments', body);
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.match(res.body.detail, new RegExp(`^${field}: `));
      assert.equal(res.body.errors[0].field, field);
    }
    assert.equal(await credits(), before);
  });

  it('a PeerTube video: 1,000 threads newest first with their replies, 1 credit, the file behind download_url', async () => {
    const before = await credits();
    const created = await api('POST', '/v1/comments', { url: pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), max_comments: 1000, sort: 'newest' });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal(created.body.credits_charged, 1);
    assert.equal(created.body.job_type, 'comments');
    const job = await waitJob(created.body.job_id);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    assert.deepEqual(job.parameters, { url: pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), max_comments: 1000, sort: 'newest', include_replies: true, webhook_url: null });
    const file = await fetchFile(job);
    const want = peerTubeOrder(peerTubeExpected(), '-createdAt')
      .filter((t) => !t.deleted || t.totalReplies > 0)
      .slice(0, 1000);
    assert.deepEqual(file.comments.map((c) => c.id), want.map((t) => t.id));
    assert.deepEqual(file.comments.map((c) => c.replies.map((r) => r.id)), want.map((t) => t.replies.map((r) => r.id)));
    const replies = want.reduce((s, t) => s + t.replies.length, 0);
    assert.equal(file.comment_count, 1000 + replies);
    assert.deepEqual(job.result_data, { title: PT_VIDEOS.big.name, comment_count: 1000 + replies, top_level_count: 1000, reply_count: replies, sort: 'newest' });
    assert.equal(await credits(), before - 1);
  });

  it('a yt-dlp platform (plugin extractor on YTDLP_PLUGIN_DIRS): defaults top/100, replies left out on request', async () => {
    const created = await api('POST', '/v1/comments', { url: ytc.url('/ytc/watch/ytc1') });
    const job = await waitJob(created.body.job_id);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    assert.deepEqual(job.parameters, { url: ytc.url('/ytc/watch/ytc1'), max_comments: 100, sort: 'top', include_replies: true, webhook_url: null });
    const q = ytc.commentQueries[ytc.commentQueries.length - 1]!;
    assert.deepEqual([q.get('raw_max_comments'), q.get('sort')], ['all,100,all', 'top']);
    const file = await fetchFile(job);
    assert.equal(file.comments.length, YTC_THREADS);
    const likes = file.comments.map((c) => c.like_count);
    assert.deepEqual(likes, [...likes].sort((a, b) => b - a));
    assert.equal(job.result_data!.top_level_count, YTC_THREADS);
    assert.ok((job.result_data!.reply_count as number) > 0);

    const lean = await api('POST', '/v1/comments', { url: ytc.url('/ytc/watch/ytc1'), max_comments: 5, sort: 'newest', include_replies: false });
    const leanJob = await waitJob(lean.body.job_id);
    assert.equal(leanJob.status, 'completed', leanJob.error_message ?? '');
    const leanFile = await fetchFile(leanJob);
    assert.deepEqual(leanFile.comments.map((c) => c.id), ['c39', 'c38', 'c37', 'c36', 'c35']);
    assert.ok(leanFile.comments.every((c) => Array.isArray(c.replies) && c.replies.length === 0));
    assert.deepEqual(leanJob.result_data, { title: file.title, comment_count: 5, top_level_count: 5, reply_count: 0, sort: 'newest' });
  });

  it('no comment support, or comments disabled: the job fails with a readable message and is refunded', async () => {
    const before = await credits();
    for (const [url, message] of [
      [ytc.url('/ytc/media/clip.mp4'), /Comments are not supported for this platform/],
      [ytc.url('/ytc/watch/ytc-off'), /Comments are disabled/],
      [pt.url(`/w/${PT_VIDEOS.closed.shortUUID}`), /Comments are disabled/],
    ] as const) {
      const created = await api('POST', '/v1/comments', { url });
      assert.equal(created.status, 202);
      const job = await waitJob(created.body.job_id);
      assert.equal(job.status, 'failed');
      assert.match(job.error_message!, message);
      assert.equal(job.download_url, null);
    }
    assert.equal(await credits(), before);
  });
});
