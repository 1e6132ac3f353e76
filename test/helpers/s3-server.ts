// An S3-compatible server for the tests: moto in server mode (PyPI `moto[server]`, in .venv), on loopback.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { projectRoot } from '../../lib/config';
import { freePort, waitFor } from './processes';

export interface S3Server {
  endpoint: string;
  /** The settings that point the service at this server and `bucket` (credentials included: moto takes any). */
  env(bucket: string, extra?: Record<string, string>): Record<string, string>;
  /** A client on this server, for the tests' own reads. */
  client: S3Client;
  createBucket(bucket: string): Promise<void>;
  close(): Promise<void>;
}

const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test-key', AWS_SECRET_ACCESS_KEY: 'test-secret' };

export async function startS3Server(): Promise<S3Server> {
  const port = await freePort();
  const child = spawn(path.join(projectRoot, '.venv/bin/moto_server'), ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const endpoint = `http://127.0.0.1:${port}`;
  await waitFor('moto_server to answer', async () => (await fetch(`${endpoint}/`).then((r) => r.ok || r.status < 500).catch(() => false)) || undefined, 60_000, 250);
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY } });
  return {
    endpoint,
    client,
    env: (bucket, extra = {}) => ({ STORAGE: 's3', S3_BUCKET: bucket, S3_REGION: 'us-east-1', S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: '1', ...CREDENTIALS, ...extra }),
    createBucket: async (bucket) => void (await client.send(new CreateBucketCommand({ Bucket: bucket }))),
    close: async () => {
      client.destroy();
      child.kill('SIGTERM');
      await exited;
    },
  };
}
