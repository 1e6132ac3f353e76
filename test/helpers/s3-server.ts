// An S3-compatible server for the tests: moto in server mode (PyPI `moto[server]`, in .venv), on loopback.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { projectRoot } from '../../lib/config';
import { freePort, waitFor } from './processes';

/** How the bucket looks to the service: answering, gone (connections refused, as a stopped server), or answering 503 (as an overloaded one). */
export type BucketOutage = 'refuse' | 'unavailable' | null;

export interface S3Server {
  /** Where the service reaches the bucket (through the fault proxy when there is one). */
  endpoint: string;
  /** The settings that point the service at this server and `bucket` (credentials included: moto takes any). */
  env(bucket: string, extra?: Record<string, string>): Record<string, string>;
  /** A client on this server (never through the fault proxy), for the tests' own reads. */
  client: S3Client;
  createBucket(bucket: string): Promise<void>;
  /** With `faultProxy`: makes the bucket unreachable in the given way, or (null) reachable again with everything it held. */
  outage(mode: BucketOutage): Promise<void>;
  close(): Promise<void>;
}

const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test-key', AWS_SECRET_ACCESS_KEY: 'test-secret' };
// what S3 itself answers when it sheds load
const UNAVAILABLE_BODY = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>ServiceUnavailable</Code><Message>Please reduce your request rate.</Message></Error>';

/**
 * With `faultProxy`, the service talks to moto through an HTTP proxy on a port of its own, which a test
 * can close (new connections refused, open ones cut: as if the server were stopped) or turn to 503s,
 * while moto keeps its objects: an outage of the bucket that loses nothing, as a restarted S3 would.
 */
export async function startS3Server(opts: { faultProxy?: boolean } = {}): Promise<S3Server> {
  const port = await freePort();
  const child = spawn(path.join(projectRoot, '.venv/bin/moto_server'), ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const direct = `http://127.0.0.1:${port}`;
  await waitFor('moto_server to answer', async () => (await fetch(`${direct}/`).then((r) => r.ok || r.status < 500).catch(() => false)) || undefined, 60_000, 250);
  const client = new S3Client({ region: 'us-east-1', endpoint: direct, forcePathStyle: true, credentials: { accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY } });
  const proxy = opts.faultProxy ? await startFaultProxy(port) : null;
  const endpoint = proxy?.endpoint ?? direct;
  return {
    endpoint,
    client,
    env: (bucket, extra = {}) => ({ STORAGE: 's3', S3_BUCKET: bucket, S3_REGION: 'us-east-1', S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: '1', ...CREDENTIALS, ...extra }),
    createBucket: async (bucket) => void (await client.send(new CreateBucketCommand({ Bucket: bucket }))),
    outage: async (mode) => {
      if (!proxy) throw new Error('startS3Server({ faultProxy: true }) is needed for outages');
      await proxy.set(mode);
    },
    close: async () => {
      client.destroy();
      await proxy?.close();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function startFaultProxy(targetPort: number) {
  const port = await freePort();
  const agent = new http.Agent({ keepAlive: true });
  const sockets = new Set<net.Socket>();
  let mode: BucketOutage = null;
  const server = http.createServer((req, res) => {
    if (mode === 'unavailable') {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(UNAVAILABLE_BODY) });
      res.end(UNAVAILABLE_BODY);
      return;
    }
    const headers = { ...req.headers };
    // hop-by-hop: this proxy has already answered any 100-continue, and keeps its own connections
    delete headers.expect;
    delete headers.connection;
    const upstream = http.request({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers, agent }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  const listen = () =>
    waitFor(`the bucket proxy on port ${port}`, () =>
      new Promise<true | undefined>((resolve) => {
        const onError = () => resolve(undefined);
        server.once('error', onError);
        server.listen(port, '127.0.0.1', () => {
          server.removeListener('error', onError);
          resolve(true);
        });
      }), 30_000, 500);
  const closeListener = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  await listen();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    set: async (next: BucketOutage) => {
      mode = next;
      if (next === 'refuse') await closeListener();
      else if (!server.listening) await listen();
    },
    close: async () => {
      await closeListener();
      agent.destroy();
    },
  };
}
