// Records real workflow histories for the replay test (test/replay.test.ts): a completed download,
// a failed download, a download with a webhook delivery (retried once) and an info read, run on the real dev server with real yt-dlp, ffmpeg and SQLite.
// Re-record after an intentional, versioned workflow change: npm run record-histories. New files get
// the RECORD_TAG suffix, so the histories of earlier versions stay and keep being replayed.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { NativeConnection } from '@temporalio/worker';
import { Job } from '../../jobs/entity';
import { chargeCredits } from '../../credits/repository';
import { createAccount } from '../../accounts/repository';
import { openOrm } from '../../db/orm';
import { openStorage } from '../../engines/open-storage';
import { loadConfig, projectRoot } from '../../lib/config';
import type { MediaJobInput } from '../../jobs/types';
import type { DownloadParams } from '../../operations/download/spec';
import { connectTemporal, createTemporalOrchestrator } from '../../workers/temporal-client';
import { startDevServer } from '../../workers/temporal-dev-server';
import { createWorkers } from '../../workers/workers';
import { startFixturePlatform } from '../helpers/fixture-platform';
import { freePort } from '../helpers/processes';
import { quietRuntime, TEMPORAL_CLI } from '../helpers/temporal';
import { startReceiver } from '../helpers/webhook-receiver';

async function main(): Promise<void> {
  quietRuntime();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-record-'));
  const fx = await startFixturePlatform();
  const dev = await startDevServer({ cliPath: TEMPORAL_CLI, dbFile: path.join(dataDir, 't.sqlite'), port: await freePort(), uiPort: await freePort() });
  const config = loadConfig({ DATA_DIR: dataDir, ALLOW_PRIVATE_NETWORK: '1', WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,2,4,6' });
  const orm = await openOrm(config, { migrate: true });
  const connection = await NativeConnection.connect({ address: dev.address });
  const workers = await createWorkers(['control', 'webhooks', 'media-info', 'media-fetch', 'media-process'], { config, storage: await openStorage(config), connection, orm });
  const running = Promise.all(workers.map((w) => w.run()));
  const client = await connectTemporal(dev.address, 'default');
  const account = await createAccount(orm.em.fork(), 'recorder', 'business');
  const outDir = path.join(projectRoot, 'test/histories');
  // v3: a source read once (source-once-v1), search attributes and memo (job-search-attributes-v1), info on media-info
  // v4: the job's state changes as local activities (local-job-steps-v1)
  const tag = process.env.RECORD_TAG ?? 'v4';
  // started as the API starts jobs: with the search attributes (the dev server registers them) and the memo
  const orchestrator = createTemporalOrchestrator(client, { infoTimeoutSeconds: 60, searchAttributes: true });
  // The CLI writes the canonical proto3 JSON that Worker.runReplayHistories reads.
  const save = (name: string, workflowId: string) =>
    fs.writeFileSync(path.join(outDir, `${name}-${tag}.json`), execFileSync(TEMPORAL_CLI, ['workflow', 'show', '--workflow-id', workflowId, '--address', dev.address, '--output', 'json']));

  async function run(name: string, input: MediaJobInput): Promise<string> {
    const { jobId } = input;
    await chargeCredits(orm.em.fork(), account.id, 1, input.jobType, async (tx) => {
      tx.create(Job, { id: jobId, accountId: account.id, jobType: input.jobType, status: 'pending', sourceUrl: input.sourceUrl, parameters: { ...input.params }, creditsCharged: 1, resultData: null, webhookUrl: input.params.webhook_url ?? null, createdAt: new Date() });
      return { jobId, value: null };
    });
    await orchestrator.startJob(input);
    const handle = client.workflow.getHandle(`job-${jobId}`);
    console.log(name, await handle.result().catch((err: Error) => `failed: ${err.message}`));
    save(name, handle.workflowId);
    return jobId;
  }

  function download(name: string, params: Partial<DownloadParams> & { url: string }): Promise<string> {
    const full = { quality: 'best', format: null, clip_start: null, clip_end: null, processing: null, subtitles: null, webhook_url: null, ...params } as const;
    return run(name, { jobId: crypto.randomUUID(), jobType: 'download', sourceUrl: params.url, params: full, accountId: account.id });
  }

  await download('download-completed', { url: fx.url('/hls/master.m3u8'), quality: '720p', format: 'mp4' });
  await download('download-failed', { url: fx.url('/watch/nomedia') });
  // a job whose webhook_url fails once, then answers: parent with event fan-out, and the delivery child
  const rx = await startReceiver();
  rx.script('/hook', [500, 200]);
  const hooked = await download('download-completed-webhook', { url: fx.url('/media/v480.mp4'), webhook_url: rx.url('/hook') });
  const child = client.workflow.getHandle(`webhook-${hooked}-job.completed-job`);
  console.log('webhook-delivery', await child.result());
  save('webhook-delivery', child.workflowId);
  await rx.close();
  // a thumbnail seeks in the source through the egress proxy instead of downloading it
  const thumbUrl = fx.url('/media/v720.mp4');
  await run('preview-thumbnail', { jobId: crypto.randomUUID(), jobType: 'preview', sourceUrl: thumbUrl, params: { url: thumbUrl, preview_type: 'thumbnail', timestamp: null, start: null, duration: null, width: 640, columns: null, rows: null, fps: null, webhook_url: null }, accountId: account.id });
  const info = await client.workflow.start('infoWorkflow', { taskQueue: 'media-info', workflowId: `info-${crypto.randomUUID()}`, args: [fx.url('/watch/trailer')] });
  await info.result();
  save('info', info.workflowId);

  for (const w of workers) w.shutdown();
  await running;
  await connection.close();
  await client.connection.close();
  await orm.close();
  await dev.stop();
  await fx.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  console.log(`histories written to ${outDir}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
