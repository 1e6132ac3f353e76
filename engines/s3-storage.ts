// Outputs and uploads in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, Garage): STORAGE=s3.
// Credentials come from the AWS SDK's default chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY,
// profiles, instance roles). Objects are streamed both ways, never held whole in memory.
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CreateBucketCommand, DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Config } from '../lib/config';
import { dependencyFault } from '../lib/dependency-faults';
import { retryPatiently } from '../lib/patience';
import { safe, Storage, type ByteRange, type UploadInfo } from './storage';

// outputs larger than this go up in parts of this size, several at once (lib-storage's multipart upload)
const PART_BYTES = 16 * 1024 * 1024;

export class S3Storage extends Storage {
  private readonly client: S3Client;

  constructor(
    config: Pick<Config, 'filesDir' | 'workDir' | 'uploadsDir'>,
    private readonly s3: Config['s3'],
  ) {
    super(config);
    this.client = new S3Client({ region: s3.region, endpoint: s3.endpoint, forcePathStyle: s3.forcePathStyle });
  }

  /** Fails, in one line, when the bucket cannot be reached with these settings and credentials: at start, never at the first job. */
  async verify(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.s3.bucket }));
    } catch (err) {
      const where = this.s3.endpoint ? `at S3_ENDPOINT ${this.s3.endpoint}` : `in AWS S3 region ${this.s3.region}`;
      const status = err instanceof S3ServiceException ? err.$metadata.httpStatusCode : undefined;
      const why = status === 404 ? 'no such bucket' : status === 403 ? 'access denied to these credentials' : (err as Error).message || (err as Error).name;
      throw new Error(`bucket ${this.s3.bucket} not reachable ${where}: ${why}`);
    }
  }

  /** Creates the bucket when it is missing (`mediasvc storage create-bucket`); true when it made it. */
  async createBucketIfMissing(): Promise<boolean> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.s3.bucket }));
      return false;
    } catch (err) {
      if (!(err instanceof S3ServiceException) || err.$metadata.httpStatusCode !== 404) throw err;
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.s3.bucket }));
      return true;
    } catch (err) {
      // another process made it in between
      if (err instanceof S3ServiceException && (err.name === 'BucketAlreadyOwnedByYou' || err.name === 'BucketAlreadyExists')) return false;
      throw err;
    }
  }

  /** A HeadBucket for /readyz; `signal` ends it when the probe gives up. */
  override async checkReachable(signal?: AbortSignal): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.s3.bucket }), { abortSignal: signal });
    } catch (err) {
      const status = err instanceof S3ServiceException ? err.$metadata.httpStatusCode : undefined;
      throw new Error(`bucket ${this.s3.bucket} did not answer${status ? ` (HTTP ${status})` : `: ${(err as Error).message || (err as Error).name}`}`);
    }
  }

  private outputKey(relative: string): string {
    const normal = path.posix.normalize(relative);
    if (normal.startsWith('..') || path.posix.isAbsolute(normal)) throw new Error('output path escapes the outputs prefix');
    return `${this.s3.prefix}files/${normal}`;
  }

  private uploadKey(uploadId: string): string {
    return `${this.s3.prefix}uploads/${path.basename(this.uploadPath(uploadId))}`;
  }

  override readonly stepsShareNoDisk = true;

  private workKey(jobId: string, relative: string): string {
    return `${this.s3.prefix}work/${safe(jobId)}/${path.relative(this.workDirOf(jobId), this.workFilePath(jobId, relative)).split(path.sep).join('/')}`;
  }

  override async shareWorkFile(jobId: string, relative: string): Promise<void> {
    await this.putFile(this.workKey(jobId, relative), this.workFilePath(jobId, relative));
  }

  /** Here already when the same machine ran the step that shared it; fetched from the bucket otherwise. */
  override async workFile(jobId: string, relative: string): Promise<string> {
    const local = this.workFilePath(jobId, relative);
    if (await fs.stat(local).then((s) => s.isFile(), () => false)) return local;
    await fs.mkdir(path.dirname(local), { recursive: true });
    await whileBucketAway(async () => {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.s3.bucket, Key: this.workKey(jobId, relative) }));
      await pipeline(res.Body as Readable, createWriteStream(`${local}.part`));
    });
    await fs.rename(`${local}.part`, local);
    return local;
  }

  override async removeJobWork(jobId: string): Promise<void> {
    await this.removeWorkDir(jobId);
    await this.removePrefix(`${this.s3.prefix}work/${safe(jobId)}/`);
  }

  /** Written in the job's work folder first; commitOutput sends it to the bucket. */
  outputPath(relative: string): string {
    const [jobId = '', ...rest] = path.posix.normalize(relative).split('/');
    return path.join(this.workDirOf(jobId), 'outputs', ...rest);
  }

  async commitOutput(relative: string): Promise<void> {
    await this.putFile(this.outputKey(relative), this.outputPath(relative));
  }

  async outputSize(relative: string): Promise<number | null> {
    return this.sizeOf(this.outputKey(relative));
  }

  async openOutput(relative: string, range?: ByteRange): Promise<Readable> {
    const res = await this.client.send(new GetObjectCommand({ Bucket: this.s3.bucket, Key: this.outputKey(relative), Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
    return res.Body as Readable;
  }

  async readOutput(relative: string, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer | null> {
    try {
      // one request: the size comes with the object, and a body over the limit is left unread
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.s3.bucket, Key: this.outputKey(relative) }));
      if ((res.ContentLength ?? 0) > maxBytes) {
        (res.Body as Readable).destroy();
        return null;
      }
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async removeOutput(jobId: string): Promise<void> {
    await this.removePrefix(`${this.s3.prefix}files/${safe(jobId)}/`);
  }

  async directOutputUrl(relative: string, seconds: number, filename: string): Promise<string | null> {
    if (this.s3.downloads !== 'redirect') return null;
    const disposition = `attachment; filename="${filename.replace(/[^\x20-\x7e]/g, '_').replace(/"/g, '')}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.s3.bucket, Key: this.outputKey(relative), ResponseContentDisposition: disposition }), { expiresIn: seconds });
  }

  /** The received bytes go to the bucket, then leave this machine's disk. */
  async commitUpload(uploadId: string, info: UploadInfo): Promise<void> {
    const local = this.uploadPath(uploadId);
    // the API answers 503 at once rather than keep a client waiting on an outage of the bucket
    await this.putFile(this.uploadKey(uploadId), local, 0);
    await this.client.send(new PutObjectCommand({ Bucket: this.s3.bucket, Key: `${this.uploadKey(uploadId)}.json`, Body: JSON.stringify(info), ContentType: 'application/json' }));
    await fs.rm(local, { force: true });
  }

  async readUploadInfo(uploadId: string): Promise<UploadInfo | null> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.s3.bucket, Key: `${this.uploadKey(uploadId)}.json` }));
      return JSON.parse(await res.Body!.transformToString('utf8')) as UploadInfo;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async fetchUpload(uploadId: string, dest: string): Promise<boolean> {
    try {
      await whileBucketAway(async () => {
        const res = await this.client.send(new GetObjectCommand({ Bucket: this.s3.bucket, Key: this.uploadKey(uploadId) }));
        await pipeline(res.Body as Readable, createWriteStream(dest));
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async removeUpload(uploadId: string): Promise<void> {
    await fs.rm(this.uploadPath(uploadId), { force: true });
    const key = this.uploadKey(uploadId);
    await this.client.send(new DeleteObjectsCommand({ Bucket: this.s3.bucket, Delete: { Objects: [{ Key: key }, { Key: `${key}.json` }], Quiet: true } }));
  }

  /** Sends a file of this machine to the bucket, waiting out an outage of the bucket (each try sends the whole file again). */
  private async putFile(key: string, file: string, patienceMs = BUCKET_PATIENCE_MS): Promise<void> {
    const { size } = await fs.stat(file);
    await whileBucketAway(async () => {
      if (size <= PART_BYTES) {
        await this.client.send(new PutObjectCommand({ Bucket: this.s3.bucket, Key: key, Body: createReadStream(file), ContentLength: size }));
        return;
      }
      await new Upload({ client: this.client, params: { Bucket: this.s3.bucket, Key: key, Body: createReadStream(file) }, partSize: PART_BYTES, queueSize: 4 }).done();
    }, patienceMs);
  }

  private async sizeOf(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.s3.bucket, Key: key }));
      return head.ContentLength ?? null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  private async removePrefix(prefix: string): Promise<void> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.s3.bucket, Prefix: prefix, ContinuationToken: token }));
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length) await this.client.send(new DeleteObjectsCommand({ Bucket: this.s3.bucket, Delete: { Objects: keys, Quiet: true } }));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}

// A step's transfer waits this long for a bucket that is away (restarting, shedding load) before its
// error goes to Temporal's few retries of the step, which re-run the whole tool and then fail the job.
const BUCKET_PATIENCE_MS = 3 * 60_000;

/** Runs `fn` again, with backoff, while the bucket does not answer (no connection, a 5xx), for up to BUCKET_PATIENCE_MS. */
export function whileBucketAway<T>(fn: () => Promise<T>, patienceMs = BUCKET_PATIENCE_MS): Promise<T> {
  return retryPatiently(fn, {
    firstMs: 500,
    maxMs: 10_000,
    withinMs: patienceMs,
    // inside a transfer with the bucket, a bare socket error (classified as a connection's) is the bucket's too
    retryable: (err) => {
      const fault = dependencyFault(err);
      return !!fault && fault.dependency !== 'disk';
    },
  });
}

function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NotFound' || err.name === 'NoSuchKey' || err.$metadata.httpStatusCode === 404);
}
