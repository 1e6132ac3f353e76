// Opens the storage the configuration names. Apart from engines/storage.ts so that the S3 engine,
// which builds on the local one's base class, is loaded only here, and only when it is used.
import type { Config } from '../lib/config';
import type { S3Storage } from './s3-storage';
import { LocalStorage, type Storage } from './storage';

type StorageConfig = Pick<Config, 'filesDir' | 'workDir' | 'uploadsDir' | 'storage' | 's3'>;

/** The S3 engine, loaded on first use. */
async function s3Storage(config: StorageConfig): Promise<S3Storage> {
  // the pinned SDK runs on Node 20; its notice that later releases need Node 22 would break the JSON log lines (docs/operating.md says it)
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { S3Storage } = await import('./s3-storage');
  return new S3Storage(config, config.s3);
}

/** The storage the configuration names (the S3 client is loaded only when it is used); a bucket is checked to be reachable. */
export async function openStorage(config: StorageConfig): Promise<Storage> {
  if (config.storage === 'local') return new LocalStorage(config);
  const storage = await s3Storage(config);
  await storage.verify();
  return storage;
}

/** `mediasvc storage create-bucket`: makes S3_BUCKET when it is missing; a message saying which. */
export async function createBucket(config: StorageConfig): Promise<string> {
  if (config.storage !== 's3') return 'STORAGE is local: there is no bucket to create';
  const made = await (await s3Storage(config)).createBucketIfMissing();
  return `bucket ${config.s3.bucket} ${made ? 'created' : 'already there'}`;
}
