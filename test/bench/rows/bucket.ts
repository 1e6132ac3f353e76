// What STORAGE=s3 adds to a job whose source is downloaded: the fetch step shares the file through the
// bucket and a later step on another machine fetches it (engines/s3-storage.ts, shareWorkFile and
// workFile), beside the bare SDK doing the same PutObject and GetObject. The bucket is moto's S3 server
// on loopback, so the figures are the service's own overhead, not a network's.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { S3Storage } from '../../../engines/s3-storage';
import { loadConfig } from '../../../lib/config';
import { startS3Server, type S3Server } from '../../helpers/s3-server';
import { fmt, type BenchContext, type BenchRow } from '../harness';

const BUCKET = 'bench';
const SOURCE_MB = Number(process.env.BENCH_BUCKET_MB ?? 64);
let s3: S3Server | null = null;
let machines: [S3Storage, S3Storage] | null = null;
let source = '';

function storageOn(ctx: BenchContext, name: string): S3Storage {
  const config = loadConfig({ DATA_DIR: path.join(ctx.work, `bucket-${name}`), ...s3!.env(BUCKET) });
  return new S3Storage(config, config.s3);
}

export const rows: BenchRow[] = [
  {
    name: 'bucket',
    order: 80,
    async setup(ctx) {
      s3 = await startS3Server();
      await s3.createBucket(BUCKET);
      // the storage takes credentials from the SDK's default chain, as in a deployment
      for (const [k, v] of Object.entries(s3.env(BUCKET))) if (k.startsWith('AWS_')) process.env[k] = v;
      machines = [storageOn(ctx, 'fetch'), storageOn(ctx, 'process')];
      // media does not compress: random bytes stand for a downloaded source
      source = path.join(ctx.work, 'bucket-source.bin');
      const out = fs.openSync(source, 'w');
      for (let i = 0; i < SOURCE_MB; i++) fs.writeSync(out, randomBytes(1 << 20));
      fs.closeSync(out);
    },
    async measure(ctx, round) {
      const [fetchMachine, processMachine] = machines!;
      const jobId = `bench-${round}`;
      const shared = path.join(fetchMachine.workDirOf(jobId), 'source.bin');
      fs.mkdirSync(path.dirname(shared), { recursive: true });
      fs.copyFileSync(source, shared);
      const t0 = performance.now();
      await fetchMachine.shareWorkFile(jobId, 'source.bin');
      const t1 = performance.now();
      await processMachine.workFile(jobId, 'source.bin');
      const t2 = performance.now();
      await Promise.all([fetchMachine.removeJobWork(jobId), fs.promises.rm(fetchMachine.workDirOf(jobId), { recursive: true, force: true }), fs.promises.rm(processMachine.workDirOf(jobId), { recursive: true, force: true })]);

      // bare: one PutObject of the file read into memory (a stream body goes up aws-chunked, which moto
      // decodes slowly: 16 s for 64 MB) and one GetObject into a file
      const Key = `bare-${round}`;
      const back = path.join(ctx.work, 'bucket-back.bin');
      const b0 = performance.now();
      await s3!.client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: fs.readFileSync(source) }));
      const b1 = performance.now();
      const res = await s3!.client.send(new GetObjectCommand({ Bucket: BUCKET, Key }));
      await pipeline(res.Body as Readable, createWriteStream(back));
      const b2 = performance.now();
      await s3!.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key }));
      fs.rmSync(back, { force: true });
      return { put: (t1 - t0) / 1000, get: (t2 - t1) / 1000, total: (t2 - t0) / 1000, barePut: (b1 - b0) / 1000, bareGet: (b2 - b1) / 1000, bareTotal: (b2 - b0) / 1000 };
    },
    report: (m) => [
      {
        what: `STORAGE=s3: a ${SOURCE_MB} MB downloaded source passed to another machine's step through the bucket (moto on loopback)`,
        product: `${fmt.s(m.total!)} (share ${fmt.s(m.put!)}, fetch ${fmt.s(m.get!)}; ${fmt.rate((SOURCE_MB * 2) / m.total!, 'MB/s')})`,
        peer: `bare SDK, PutObject of the bytes in memory + GetObject: ${fmt.s(m.bareTotal!)} (${fmt.s(m.barePut!)} + ${fmt.s(m.bareGet!)})`,
        ratio: fmt.ratio(m.total!, m.bareTotal!),
      },
    ],
    async teardown() {
      await s3?.close();
    },
  },
];
