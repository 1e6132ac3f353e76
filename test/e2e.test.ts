import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURE, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { audioStream, ffprobe, videoStream } from './helpers/media';
import { cli } from './helpers/processes';
import { startServeStack, type JobBody, type ServeStack } from './helpers/serve-stack';


describe('end to end: make run stack (serve) with the real dev server, workers and CLI', function () {
  let fx: FixturePlatform;
  let s: ServeStack;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  let key: string;
  let accountId: string;
  const api = (method: string, p: string, body?: unknown) => s.api(method, p, body);
  const waitJob = (jobId: string) => s.waitJob(jobId);

  before(async function () {
    fx = await startFixturePlatform();
    s = await startServeStack({ name: 'e2e', plan: 'pro' });
    ({ env, dataDir, key, accountId } = s);
  });

  after(async () => {
    await s?.stop();
    await fx?.close();
  });

  it('the CLI made a usable key and shows it by its prefix only', async () => {
    assert.match(key, /^vc_[A-Za-z0-9_-]{40,}$/);
    const lines = await cli(env, 'keys', 'list', '--account', accountId);
    assert.equal(lines.length, 1);
    const cols = lines[0]!.split('\t');
    assert.equal(cols[1], key.slice(0, 8));
    assert.equal(cols[2], 'e2e key');
    assert.equal(cols[3], 'active');
    assert.ok(!lines[0]!.includes(key));
    assert.equal((await cli(env, 'accounts', 'credits', accountId)).pop(), '2000');
    const secret = (await cli(env, 'accounts', 'webhook-secret', accountId)).pop()!;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const rotated = (await cli(env, 'accounts', 'webhook-secret', accountId, '--rotate')).pop()!;
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, secret);
    assert.equal((await cli(env, 'accounts', 'webhook-secret', accountId)).pop(), rotated);
  });

  it('GET /v1/info reads the page through a workflow on the media-fetch worker', async () => {
    const res = await api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/trailer'))}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.title, FIXTURE.page.title);
    assert.equal(res.body.duration, 4);
    assert.equal(res.body.upload_date, '2024-03-15');
    assert.ok(res.headers.get('x-ratelimit-limit'));
    const nf = await api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/nomedia'))}`);
    assert.equal(nf.status, 404);
    assert.match(nf.body.detail, /No platform handler supports/);
    assert.equal((await cli(env, 'accounts', 'credits', accountId)).pop(), '1999', 'only the 200 was charged');
  });

  it('POST /v1/download runs the job and serves a file whose bytes ffprobe confirms', async () => {
    const created = await api('POST', '/v1/download', { url: fx.url('/hls/master.m3u8'), quality: '720p', format: 'mp4' });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const job = await waitJob(created.body.job_id);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    assert.equal(job.progress, 100);
    assert.equal(job.result_data!.format, 'mp4');
    assert.ok(job.download_url && job.expires_at);

    const res = await fetch(job.download_url); // no Authorization header
    assert.equal(res.status, 200);
    const file = path.join(dataDir, 'fetched.mp4');
    fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    assert.equal(fs.statSync(file).size, job.result_data!.filesize);
    const probe = await ffprobe(file);
    assert.equal(videoStream(probe)?.height, 720);
    assert.equal(videoStream(probe)?.codec_name, 'h264');
    assert.equal(audioStream(probe)?.codec_name, 'aac');
    assert.ok(Math.abs(Number(probe.format.duration) - 4) < 0.2);
  });

  it('audio downloads deliver audio-only files', async () => {
    const created = await api('POST', '/v1/download', { url: fx.url('/watch/trailer'), quality: 'audio', format: 'mp3' });
    const job = await waitJob(created.body.job_id);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    const file = path.join(dataDir, 'fetched.mp3');
    fs.writeFileSync(file, Buffer.from(await (await fetch(job.download_url!)).arrayBuffer()));
    const probe = await ffprobe(file);
    assert.equal(videoStream(probe), undefined);
    assert.equal(audioStream(probe)?.codec_name, 'mp3');
  });

  it('a failing job ends failed with a readable message and refunds its credit', async () => {
    const before = Number((await cli(env, 'accounts', 'credits', accountId)).pop());
    const created = await api('POST', '/v1/download', { url: fx.url('/watch/nomedia') });
    assert.equal(created.status, 202);
    const job = await waitJob(created.body.job_id);
    assert.equal(job.status, 'failed');
    assert.match(job.error_message!, /No platform handler supports/);
    assert.equal(job.failure_kind, 'unsupported', 'the kind, for programs');
    assert.equal(job.download_url, null);
    assert.equal(Number((await cli(env, 'accounts', 'credits', accountId)).pop()), before);
  });

  it('stops cleanly on SIGTERM and keeps every job across a restart', async () => {
    const list = await api('GET', '/v1/jobs?limit=100');
    assert.ok(list.body.items.length >= 3);
    assert.equal(await s.restart(), 0, 'SIGTERM stops serve cleanly');
    assert.match(fs.readFileSync(s.svc.logFile, 'utf8'), /mediasvc stopped/);
    const again = await api('GET', '/v1/jobs?limit=100');
    assert.deepEqual(
      again.body.items.map((j: JobBody) => [j.job_id, j.status]),
      list.body.items.map((j: JobBody) => [j.job_id, j.status]),
    );
    // and the restarted stack still runs new jobs
    const created = await api('POST', '/v1/download', { url: fx.url('/media/v480.mp4') });
    assert.equal((await waitJob(created.body.job_id)).status, 'completed');
  });
});
