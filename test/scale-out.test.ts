import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDevServer, type DevServer } from '../workers/temporal-dev-server';
import { FIXTURE, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { ffprobe, videoStream } from './helpers/media';
import { startPostgres, type TestPostgres } from './helpers/postgres';
import { cli, freePort, startService, stopService, waitFor, waitHealthy, type Service } from './helpers/processes';
import { TEMPORAL_CLI } from './helpers/temporal';

describe('scale-out: API and per-queue workers as separate processes on PostgreSQL and one Temporal server', function () {
  let fx: FixturePlatform;
  let pg: TestPostgres;
  let temporal: DevServer;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  const services: Service[] = [];
  let base: string;
  let key: string;

  before(async function () {
    fx = await startFixturePlatform();
    pg = await startPostgres();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-scale-'));
    temporal = await startDevServer({ cliPath: TEMPORAL_CLI, dbFile: path.join(dataDir, 'temporal.sqlite'), port: await freePort(), uiPort: await freePort(), logFile: path.join(dataDir, 'temporal.log') });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // DATA_DIR stands for the shared volume every worker mounts in a real deployment.
    // one key for every process, as a deployment gives them (else they would share the generated key file)
    env = { DATABASE_URL: pg.url, TEMPORAL_ADDRESS: temporal.address, DATA_DIR: dataDir, PORT: String(port), ALLOW_PRIVATE_NETWORK: '1', SECRETS_KEY: crypto.randomBytes(32).toString('base64') };
    await cli(env, 'migrate');
    const api = startService(['api'], env, path.join(dataDir, 'api.log'));
    services.push(api);
    // an info worker, two fetch workers and two process workers, as on several machines
    for (const [i, queues] of ['control', 'webhooks', 'media-info', 'media-fetch', 'media-fetch', 'media-process', 'media-process'].entries()) {
      services.push(startService(['worker', '--queues', queues], env, path.join(dataDir, `worker-${i}-${queues}.log`)));
    }
    await waitHealthy(base, api);
    const accountId = (await cli(env, 'accounts', 'create', '--name', 'scale', '--plan', 'business')).pop()!;
    key = (await cli(env, 'keys', 'create', '--account', accountId, '--name', 'k')).pop()!;
  });

  after(async () => {
    await Promise.all(services.map((s) => stopService(s)));
    await temporal?.stop();
    await pg?.stop();
    await fx?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('completes a batch of concurrent jobs across the worker processes', async () => {
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const requests = [
      { url: fx.url('/hls/master.m3u8'), quality: '480p', format: 'mp4' },
      { url: fx.url('/hls/master.m3u8'), quality: '1080p', format: 'mkv' },
      { url: fx.url('/media/v720.mp4'), quality: 'best', format: 'webm' },
      { url: fx.url('/watch/trailer'), quality: 'audio', format: 'wav' },
      { url: fx.url('/media/clip.webm') },
      { url: fx.url('/watch/html5'), quality: '480p' },
    ];
    const ids = await Promise.all(
      requests.map(async (body) => {
        const res = await fetch(`${base}/v1/download`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
        assert.equal(res.status, 202);
        return ((await res.json()) as { job_id: string }).job_id;
      }),
    );
    const jobs = await Promise.all(
      ids.map((id) =>
        waitFor(`job ${id}`, async () => {
          const job = (await (await fetch(`${base}/v1/jobs/${id}`, { headers: auth })).json()) as { status: string; error_message: string | null; download_url: string; result_data: Record<string, unknown> };
          return job.status === 'completed' || job.status === 'failed' ? job : undefined;
        }, 180_000, 300),
      ),
    );
    for (const job of jobs) assert.equal(job.status, 'completed', job.error_message ?? '');
    const first = path.join(dataDir, 'first.mp4');
    fs.writeFileSync(first, Buffer.from(await (await fetch(jobs[0]!.download_url)).arrayBuffer()));
    assert.equal(videoStream(await ffprobe(first))?.height, 480);
    assert.deepEqual(jobs.map((j) => j.result_data.format), ['mp4', 'mkv', 'webm', 'wav', 'webm', 'mp4']);
    assert.ok(jobs.every((j) => Math.abs(Number(j.result_data.duration) - FIXTURE.durationSeconds) < 0.3));

    // the synchronous read runs on its own worker process (its workflow and its activity)
    const info = await fetch(`${base}/v1/info?url=${encodeURIComponent(fx.url('/media/v720.mp4'))}`, { headers: auth });
    assert.equal(info.status, 200);
    assert.ok(Math.abs(((await info.json()) as { duration: number }).duration - FIXTURE.durationSeconds) < 0.5);

    // the work really spread over the worker processes
    const logs = services.slice(1).map((s) => fs.readFileSync(s.logFile, 'utf8'));
    assert.ok(logs.every((l) => /mediasvc ready: workers for/.test(l)));
  });
});
