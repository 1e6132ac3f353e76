// What the container tests drive: podman and podman-compose, with the settings this repository's
// containers.conf gives them (runc, limits that fit), and the image built by the same script users run.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../lib/config';
import { waitFor } from '../helpers/processes';
import { SPEECH_DIR } from '../helpers/speech-fixtures';

const execFileP = promisify(execFile);
export const CONTAINERS_CONF = path.join(projectRoot, 'scripts/container/containers.conf');
const ENV = { ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? CONTAINERS_CONF };

/** Runs podman; resolves its stdout, or rejects with its stderr's tail. */
export async function podman(...args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileP('podman', args, { env: ENV, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`podman ${args.join(' ')} failed: ${(e.stderr || e.message).trim().split('\n').slice(-5).join('\n')}`);
  }
}

/** Why podman cannot run a container here, or null when it can (the base image is made first when missing). */
export async function podmanUnusable(): Promise<string | null> {
  try {
    await execFileP('bash', ['scripts/container/base-image.sh'], { cwd: projectRoot, env: ENV, timeout: 600_000 });
    await podman('run', '--rm', '--pull=never', '--network=none', 'docker.io/library/debian:bookworm-slim', 'true');
    return null;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return (e.stderr || e.message).trim().split('\n').slice(-3).join(' ');
  }
}

/** Runs a command with output to a log file; resolves the seconds it took, rejects with the log's tail. */
export function runLogged(command: string, args: string[], logFile: string, env: NodeJS.ProcessEnv = {}): Promise<number> {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const out = fs.openSync(logFile, 'a');
  const started = Date.now();
  const child = spawn(command, args, { cwd: projectRoot, env: { ...ENV, ...env }, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve((Date.now() - started) / 1000);
      else reject(new Error(`${command} ${args.join(' ')} exited ${code}; its log (${logFile}) ends:\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`));
    });
  });
}

/** Builds an image with scripts/container/build-image.sh; resolves the seconds it took. */
export function buildImage(image: string, logFile: string, dockerfile = 'Dockerfile'): Promise<number> {
  return runLogged('bash', ['scripts/container/build-image.sh'], logFile, { IMAGE: image, DOCKERFILE: dockerfile });
}

/** The image's size in MB, as podman reports it. */
export async function imageSizeMb(image: string): Promise<number> {
  return Math.round(Number(await podman('image', 'inspect', '--format', '{{.Size}}', image)) / 1e6);
}

/** podman-compose on the given files, as one project. */
export function compose(project: string, files: string[], logFile: string, env: NodeJS.ProcessEnv = {}) {
  const base = ['-p', project, ...files.flatMap((f) => ['-f', f])];
  return {
    up: () => runLogged('podman-compose', [...base, 'up', '-d'], logFile, env),
    // the service stops gracefully within a minute (podman-compose's own default is 10 s)
    down: async (volumes = false): Promise<number> => {
      // the image's anonymous /data volumes and the project's network outlive podman-compose's down
      const ids = (await podman('ps', '-aq', '--filter', `label=io.podman.compose.project=${project}`)).split('\n').filter(Boolean);
      const owned = volumes && ids.length ? (await podman('inspect', '--format', '{{range .Mounts}}{{.Name}} {{end}}', ...ids)).split(/\s+/).filter(Boolean) : [];
      const took = await runLogged('podman-compose', [...base, 'down', '-t', '60', ...(volumes ? ['-v'] : [])], logFile, env);
      if (volumes) {
        for (const v of new Set(owned)) await podman('volume', 'rm', '-f', v).catch(() => undefined);
        await podman('network', 'rm', '-f', `${project}_default`).catch(() => undefined);
      }
      return took;
    },
    container: (service: string, index = 1) => `${project}_${service}_${index}`,
  };
}

/**
 * An address of this machine that every container reaches, whichever compose network it is on:
 * one of the machine's own (not a container bridge's), routed to it through the container's gateway.
 */
export async function hostAddressFromContainers(): Promise<string> {
  for (const [name, addrs] of Object.entries(os.networkInterfaces())) {
    if (/^(lo|cni|podman|veth|docker|br-)/.test(name)) continue;
    const v4 = addrs?.find((a) => a.family === 'IPv4' && !a.internal);
    if (v4) return v4.address;
  }
  throw new Error('this machine has no IPv4 address outside loopback and container bridges for containers to reach it at');
}

export interface ContainerOrigin {
  /** The media as a container reaches it: `http://GATEWAY:PORT/NAME`. */
  url(name: string): string;
  close(): Promise<void>;
}

/**
 * Serves a short video (clip.mp4), a page embedding it (watch.html, for yt-dlp's generic extractor)
 * and the shared speech recordings, on every interface of this machine so that containers reach it.
 */
export async function startContainerOrigin(clip: string): Promise<ContainerOrigin> {
  const host = await hostAddressFromContainers();
  const server = http.createServer((req, res) => {
    const name = path.basename(decodeURIComponent((req.url ?? '/').split('?')[0]!));
    if (name === 'watch.html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>clip</title><video controls src="/clip.mp4"></video>');
      return;
    }
    const file = name === 'clip.mp4' ? clip : path.join(SPEECH_DIR, name);
    if (!/\.(mp4|wav|flac)$/.test(name) || !fs.existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': name.endsWith('.mp4') ? 'video/mp4' : 'audio/wav', 'content-length': fs.statSync(file).size });
    if (req.method === 'HEAD') res.end();
    else fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '0.0.0.0', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name) => `http://${host}:${port}/${name}`,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** Polls every half second until `fn` resolves a value (not undefined), or fails after `timeoutMs`. */
export const until = <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> => waitFor(what, fn, timeoutMs, 500);

/** An account (pro) and a key made with the operator CLI inside `container`: a client for them. */
export async function accountClient(container: string, base: string, name: string): Promise<ReturnType<typeof apiClient>> {
  const accountId = (await podman('exec', container, 'mediasvc', 'accounts', 'create', '--name', name, '--plan', 'pro')).split('\n').pop()!;
  const key = (await podman('exec', container, 'mediasvc', 'keys', 'create', '--account', accountId, '--name', `${name} key`)).split('\n').pop()!;
  return apiClient(base, key);
}

/** A JSON client for one API base and key. */
export function apiClient(base: string, key: string) {
  const call = async (method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + p, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return {
    call,
    async create(p: string, body: unknown): Promise<string> {
      const r = await call('POST', p, body);
      if (r.status !== 202) throw new Error(`POST ${p} answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.job_id as string;
    },
    async waitJob(id: string, timeoutMs = 600_000): Promise<any> {
      let last: any = null;
      try {
        return await until(
          `job ${id}`,
          async () => {
            last = (await call('GET', `/v1/jobs/${id}`)).body;
            return last?.status === 'completed' || last?.status === 'failed' ? last : undefined;
          },
          timeoutMs,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message} (it was ${JSON.stringify({ status: last?.status, progress: last?.progress })})`);
      }
    },
  };
}

/** Resolves when GET /readyz answers 200; the seconds it took from `since`. */
export async function waitReady(base: string, since: number, timeoutMs = 300_000): Promise<number> {
  await until(`${base}/readyz`, async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined), timeoutMs);
  return (Date.now() - since) / 1000;
}
