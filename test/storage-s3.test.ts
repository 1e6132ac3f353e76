// STORAGE=s3: outputs and uploads in an S3-compatible bucket (moto's server on loopback), first through
// the storage engine, then through a real serve whose data directory never holds a result.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createDownloadActivities } from '../operations/download/activities';
import { createSourceActivities } from '../activities/source/activities';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import { S3Storage } from '../engines/s3-storage';
import { createYtDlpEngine } from '../engines/ytdlp/ytdlp.engine';
import { loadConfig } from '../lib/config';
import { StepScratchInterceptor } from '../workers/step-scratch.interceptor';
import { runActivity } from './helpers/activity-env';
import { testEgress } from './helpers/egress';
import { ffprobe } from './helpers/media';
import { startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { startS3Server, type S3Server } from './helpers/s3-server';
import { CLI } from './helpers/processes';
import { startServeStack, type ServeStack } from './helpers/serve-stack';

async function keys(s3: S3Server, bucket: string, prefix = ''): Promise<string[]> {
  const page = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (page.Contents ?? []).map((o) => o.Key!).sort();
}

async function objectBytes(s3: S3Server, bucket: string, key: string): Promise<Buffer> {
  const res = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await res.Body!.transformToByteArray());
}

const streamBytes = async (r: NodeJS.ReadableStream): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
};

describe('object storage (STORAGE=s3) on an S3-compatible server', function () {
  this.timeout(300_000);
  let s3: S3Server;
  let dir: string;
  const saved: Record<string, string | undefined> = {};

  before(async () => {
    s3 = await startS3Server();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storage-s3-'));
    // the SDK's default credential chain reads these, as it would on a server
    for (const [k, v] of Object.entries(s3.env('unused'))) if (k.startsWith('AWS_')) [saved[k], process.env[k]] = [process.env[k], v];
  });
  after(async () => {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    await s3?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('the storage engine', () => {
    let storage: S3Storage;
    const bucket = 'engine-bucket';
    before(async () => {
      await s3.createBucket(bucket);
      const config = loadConfig({ DATA_DIR: dir, ...s3.env(bucket, { S3_PREFIX: '/tenant-a/' }) });
      storage = new S3Storage(config, config.s3);
    });

    it('commits an output from the work folder under the prefix, sizes it, serves ranges and text, and removes every output of a job', async () => {
      const jobId = crypto.randomUUID();
      const relative = storage.outputRelative(jobId, 'output.bin');
      const local = storage.outputPath(relative);
      assert.ok(local.startsWith(storage.workDirOf(jobId) + path.sep), `written in the job's work folder: ${local}`);
      const bytes = crypto.randomBytes(100_000);
      fs.mkdirSync(path.dirname(local), { recursive: true });
      fs.writeFileSync(local, bytes);
      await storage.commitOutput(relative);
      const text = storage.outputRelative(jobId, 'notes.json');
      fs.writeFileSync(storage.outputPath(text), '{"ok":true}');
      await storage.commitOutput(text);

      assert.deepEqual(await keys(s3, bucket), [`tenant-a/files/${jobId}/notes.json`, `tenant-a/files/${jobId}/output.bin`]);
      assert.equal(await storage.outputSize(relative), bytes.length);
      assert.deepEqual(await streamBytes(await storage.openOutput(relative)), bytes);
      assert.deepEqual(await streamBytes(await storage.openOutput(relative, { start: 1000, end: 1999 })), bytes.subarray(1000, 2000));
      assert.equal(await storage.readOutputText(text), '{"ok":true}');
      assert.equal(await storage.readOutput(relative, 10), null, 'larger than asked for');
      assert.equal(await storage.directOutputUrl(relative, 60, 'x.bin'), null, 'S3_DOWNLOADS=stream: no direct URL');

      await storage.removeOutput(jobId);
      assert.deepEqual(await keys(s3, bucket, `tenant-a/files/${jobId}/`), []);
      assert.equal(await storage.outputSize(relative), null);
      assert.equal(await storage.readOutput(relative), null);
    });

    it('sends an output larger than one part as a multipart upload, byte for byte', async () => {
      const jobId = crypto.randomUUID();
      const relative = storage.outputRelative(jobId, 'large.bin');
      const local = storage.outputPath(relative);
      fs.mkdirSync(path.dirname(local), { recursive: true });
      const bytes = crypto.randomBytes(40 * 1024 * 1024);
      fs.writeFileSync(local, bytes);
      await storage.commitOutput(relative);
      const stored = await objectBytes(s3, bucket, `tenant-a/files/${relative}`);
      assert.equal(stored.length, bytes.length);
      assert.ok(stored.equals(bytes), 'the same bytes');
      await storage.removeOutput(jobId);
    });

    it('keeps an upload in the bucket (not on the receiving disk) with its info; a worker fetches it into its work folder; removal removes both', async () => {
      const id = 'upl_' + 'b'.repeat(24);
      fs.mkdirSync(path.dirname(storage.uploadPath(id)), { recursive: true });
      fs.writeFileSync(storage.uploadPath(id), 'the bytes');
      await storage.commitUpload(id, { filename: 'talk.mp3', content_type: 'audio/mpeg', duration: 12.5 });
      assert.equal(fs.existsSync(storage.uploadPath(id)), false, 'gone from the receiving disk');
      assert.deepEqual(await keys(s3, bucket, 'tenant-a/uploads/'), [`tenant-a/uploads/${id}`, `tenant-a/uploads/${id}.json`]);
      assert.deepEqual(await storage.readUploadInfo(id), { filename: 'talk.mp3', content_type: 'audio/mpeg', duration: 12.5 });
      const dest = path.join(dir, 'fetched');
      assert.equal(await storage.fetchUpload(id, dest), true);
      assert.equal(fs.readFileSync(dest, 'utf8'), 'the bytes');
      await storage.removeUpload(id);
      assert.deepEqual(await keys(s3, bucket, 'tenant-a/uploads/'), []);
      assert.equal(await storage.readUploadInfo(id), null);
      assert.equal(await storage.fetchUpload(id, path.join(dir, 'again')), false);
    });

    it('with S3_DOWNLOADS=redirect gives a presigned URL that serves the file (and a range) without credentials, named for download', async () => {
      const config = loadConfig({ DATA_DIR: dir, ...s3.env(bucket, { S3_DOWNLOADS: 'redirect' }) });
      const redirecting = new S3Storage(config, config.s3);
      const jobId = crypto.randomUUID();
      const relative = redirecting.outputRelative(jobId, 'output.mp4');
      fs.mkdirSync(path.dirname(redirecting.outputPath(relative)), { recursive: true });
      const bytes = crypto.randomBytes(4096);
      fs.writeFileSync(redirecting.outputPath(relative), bytes);
      await redirecting.commitOutput(relative);
      const url = await redirecting.directOutputUrl(relative, 120, 'My clip.mp4');
      assert.ok(url, 'a URL');
      assert.match(url, /X-Amz-Signature=/);
      const whole = await fetch(url);
      assert.equal(whole.status, 200);
      assert.match(whole.headers.get('content-disposition') ?? '', /attachment; filename="My clip.mp4"/);
      assert.deepEqual(Buffer.from(await whole.arrayBuffer()), bytes);
      const part = await fetch(url, { headers: { range: 'bytes=10-19' } });
      assert.equal(part.status, 206);
      assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(10, 20));
      await redirecting.removeOutput(jobId);
    });

    it('refuses STORAGE=s3 without a bucket, and a bucket without STORAGE=s3, in words', () => {
      assert.throws(() => loadConfig({ DATA_DIR: dir, STORAGE: 's3' }), /S3_BUCKET: STORAGE=s3 needs the bucket/);
      assert.throws(() => loadConfig({ DATA_DIR: dir, S3_BUCKET: bucket }), /S3_BUCKET is set but STORAGE is not s3/);
    });

    it('a process with an unreachable bucket stops at start with one line naming the bucket and the endpoint', () => {
      const start = (env: Record<string, string>) => {
        try {
          execFileSync(CLI, ['worker', '--queues', 'media-process'], { env: { ...process.env, DATA_DIR: path.join(dir, 'unreachable'), TEMPORAL_ADDRESS: '127.0.0.1:9', ...env }, stdio: 'pipe', timeout: 60_000 });
          return { status: 0, stderr: '' };
        } catch (err) {
          const e = err as { status: number | null; stderr: Buffer };
          return { status: e.status, stderr: e.stderr.toString() };
        }
      };
      const missing = start(s3.env('no-such-bucket'));
      assert.equal(missing.status, 1, missing.stderr);
      assert.equal(missing.stderr.trim(), `mediasvc: bucket no-such-bucket not reachable at S3_ENDPOINT ${s3.endpoint}: no such bucket`);
      const down = start(s3.env(bucket, { S3_ENDPOINT: 'http://127.0.0.1:9' }));
      assert.equal(down.status, 1, down.stderr);
      assert.match(down.stderr.trim(), new RegExp(`^mediasvc: bucket ${bucket} not reachable at S3_ENDPOINT http://127\\.0\\.0\\.1:9: .*ECONNREFUSED`));
      assert.equal(down.stderr.trim().split('\n').length, 1, down.stderr);
    });
  });

  describe('two machines that share only the bucket', () => {
    const bucket = 'machines-bucket';
    let fx: FixturePlatform;
    let egress: EgressProxy;
    before(async () => {
      await s3.createBucket(bucket);
      fx = await startFixturePlatform();
      egress = await testEgress();
    });
    after(async () => {
      await fx?.close();
    });

    /** A machine: its own data directory, the shared bucket, and its steps run as its worker runs them (scratch removed after each). */
    function machine(name: string) {
      const config = loadConfig({ DATA_DIR: path.join(dir, name), ALLOW_PRIVATE_NETWORK: '1', ...s3.env(bucket) });
      const storage = new S3Storage(config, config.s3);
      const ffmpeg = createFfmpegEngine(config);
      const step = <I extends { jobId: string }, R>(fn: (input: I) => Promise<R>, input: I): Promise<R> =>
        new StepScratchInterceptor(storage).execute({ args: [input], headers: {} }, async () => runActivity(fn, input)) as Promise<R>;
      return { config, storage, ffmpeg, step };
    }

    it("a job's source downloaded on one machine is processed on another; each machine's scratch is gone after its step, the bucket's when the job ends", async () => {
      const fetcher = machine('fetcher');
      const processor = machine('processor');
      const source = createSourceActivities({
        ytdlp: createYtDlpEngine({ binary: fetcher.config.ytdlpPath, ffmpegPath: fetcher.config.ffmpegPath, ffprobePath: fetcher.config.ffprobePath }),
        ffmpeg: fetcher.ffmpeg,
        storage: fetcher.storage,
        egress,
        config: { allowPrivateNetwork: true, maxSourceDurationSeconds: 3600, maxSourceBytes: 1024 ** 3, allowLive: false },
      });
      const download = createDownloadActivities({ ffmpeg: processor.ffmpeg, storage: processor.storage });
      const jobId = crypto.randomUUID();

      const resolved = await fetcher.step(source.resolveSource, { jobId, url: fx.url('/media/v480.mp4'), quality: '720p', format: null, reads: 'whole', progressRange: [0, 50] });
      assert.ok(resolved.sourceFile, 'downloaded');
      assert.equal(fs.existsSync(fetcher.storage.workDirOf(jobId)), false, "the fetching machine's scratch is gone after its step");
      assert.deepEqual(await keys(s3, bucket, `work/${jobId}/`), [`work/${jobId}/${resolved.sourceFile}`]);

      const output = await processor.step(download.finalizeDownload, { jobId, sourceFile: resolved.sourceFile, quality: '720p', format: 'mp4', title: resolved.title, progressRange: [50, 99] });
      assert.equal(fs.existsSync(processor.storage.workDirOf(jobId)), false, "the processing machine's scratch is gone after its step");
      const stored = path.join(dir, 'output-from-bucket.mp4');
      fs.writeFileSync(stored, await objectBytes(s3, bucket, `files/${output.outputFile}`));
      const probe = await ffprobe(stored);
      assert.ok(probe.streams.some((st) => st.codec_type === 'video'), 'the output in the bucket is a video');
      assert.equal(Number(output.resultData.filesize), fs.statSync(stored).size);

      // the job ends (the control worker, on a third machine)
      await machine('control').storage.removeJobWork(jobId);
      assert.deepEqual(await keys(s3, bucket, `work/${jobId}/`), [], "the job's shared work is gone from the bucket");
      assert.deepEqual(await keys(s3, bucket, `files/${jobId}/`), [`files/${output.outputFile}`], 'its output stays until it expires');
    });

    it("a failing step's scratch is removed too", async () => {
      const m = machine('failing');
      const jobId = crypto.randomUUID();
      await assert.rejects(
        m.step(async (input: { jobId: string }) => {
          fs.mkdirSync(m.storage.workDirOf(input.jobId), { recursive: true });
          fs.writeFileSync(path.join(m.storage.workDirOf(input.jobId), 'partial'), 'x');
          throw new Error('the tool failed');
        }, { jobId }),
        /the tool failed/,
      );
      assert.equal(fs.existsSync(m.storage.workDirOf(jobId)), false);
    });
  });

  describe('a real serve with STORAGE=s3', () => {
    const bucket = 'serve-bucket';
    let fx: FixturePlatform;
    let s: ServeStack;
    before(async () => {
      await s3.createBucket(bucket);
      fx = await startFixturePlatform();
      s = await startServeStack({ name: 's3', env: s3.env(bucket) });
    });
    after(async () => {
      await s?.stop();
      await fx?.close();
    });

    async function finished(jobId: string): Promise<{ status: string; download_url: string | null; error_message: string | null; result_data: Record<string, unknown> | null }> {
      for (let i = 0; i < 600; i++) {
        const job = (await s.api('GET', `/v1/jobs/${jobId}`)).body as { status: string; download_url: string | null; error_message: string | null; result_data: Record<string, unknown> | null };
        if (job.status === 'completed' || job.status === 'failed') return job;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`job ${jobId} never ended`);
    }

    it('keeps a job output and an upload in the bucket, never in DATA_DIR; download links serve the bucket bytes, ranges too', async () => {
      const created = await s.api('POST', '/v1/preview', { url: fx.url('/media/v480.mp4'), preview_type: 'thumbnail', timestamp: '1' });
      assert.equal(created.status, 202, JSON.stringify(created.body));
      const job = await finished(created.body.job_id as string);
      assert.equal(job.status, 'completed', job.error_message ?? '');
      const jobId = created.body.job_id as string;
      assert.deepEqual(await keys(s3, bucket, `files/${jobId}/`), [`files/${jobId}/preview.jpg`]);
      const stored = await objectBytes(s3, bucket, `files/${jobId}/preview.jpg`);

      const file = await fetch(job.download_url!);
      assert.equal(file.headers.get('content-type'), 'image/jpeg', `${file.status} ${file.headers.get('content-type')}: ${file.status === 200 ? '' : await file.text()}`);
      assert.equal(file.status, 200);
      assert.deepEqual(Buffer.from(await file.arrayBuffer()), stored);
      const part = await fetch(job.download_url!, { headers: { range: 'bytes=0-1' } });
      assert.equal(part.status, 206);
      assert.deepEqual([...Buffer.from(await part.arrayBuffer())], [0xff, 0xd8], 'a JPEG starts with its SOI marker');

      // an upload as the source of another job: received by the API, kept in the bucket, fetched by the worker
      const clip = path.join(dir, 'clip.mp4');
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25', '-t', '3', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip]);
      const form = new FormData();
      form.append('file', new Blob([fs.readFileSync(clip)], { type: 'video/mp4' }), 'clip.mp4');
      const up = await fetch(`${s.base}/v1/uploads`, { method: 'POST', headers: { authorization: `Bearer ${s.key}` }, body: form });
      const upload = (await up.json()) as { upload_id: string };
      assert.equal(up.status, 201, JSON.stringify(upload));
      assert.deepEqual(await keys(s3, bucket, 'uploads/'), [`uploads/${upload.upload_id}`, `uploads/${upload.upload_id}.json`]);
      const fp = await s.api('POST', '/v1/fingerprint', { upload_id: upload.upload_id, timestamp: '1' });
      assert.equal(fp.status, 202, JSON.stringify(fp.body));
      const fingerprint = await finished(fp.body.job_id as string);
      assert.equal(fingerprint.status, 'completed', fingerprint.error_message ?? '');
      const fromLink = JSON.parse(Buffer.from(await (await fetch(fingerprint.download_url!)).arrayBuffer()).toString('utf8')) as Record<string, unknown>;
      assert.equal(fromLink.phash, fingerprint.result_data?.phash);

      // nothing of either result, nor the upload, on the service's own disk
      const dataDir = s.env.DATA_DIR!;
      const onDisk = (sub: string) => (fs.existsSync(path.join(dataDir, sub)) ? fs.readdirSync(path.join(dataDir, sub)) : []);
      assert.deepEqual(onDisk('files'), [], 'no outputs in DATA_DIR/files');
      assert.deepEqual(onDisk('uploads').filter((n) => !n.endsWith('.part')), [], 'no uploads in DATA_DIR/uploads');
    });

    it("keeps every file of a job with several (a storyboard) in the bucket; each of the job's links serves its own, the WebVTT naming the sprite's link", async () => {
      const created = await s.api('POST', '/v1/preview', { url: fx.url('/media/v480.mp4'), preview_type: 'storyboard' });
      assert.equal(created.status, 202, JSON.stringify(created.body));
      const jobId = created.body.job_id as string;
      assert.equal((await finished(jobId)).status, 'completed');
      const job = (await s.api('GET', `/v1/jobs/${jobId}`)).body as { files: { name: string; url: string; size: number }[] };
      assert.deepEqual(await keys(s3, bucket, `files/${jobId}/`), ['storyboard.jpg', 'storyboard.json', 'storyboard.vtt'].map((n) => `files/${jobId}/${n}`));
      for (const f of job.files) {
        const res = await fetch(f.url);
        assert.equal(res.status, 200, `${f.name}: ${res.status}`);
        const body = Buffer.from(await res.arrayBuffer());
        if (f.name === 'storyboard.jpg') assert.deepEqual(body, await objectBytes(s3, bucket, `files/${jobId}/storyboard.jpg`));
        else assert.ok(body.toString('utf8').includes(`${job.files[1]!.url}`), `${f.name} links the sprite: ${body.toString('utf8').slice(0, 200)}`);
        assert.equal(body.length, f.name === 'storyboard.jpg' ? f.size : body.length);
      }
    });
  });
});
