import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cli, freePort, startService, stopService, waitFor, waitHealthy, type Service } from './processes';

/** The Job resource as the API returns it. */
export interface JobBody {
  job_id: string;
  job_type: string;
  status: string;
  parameters: Record<string, any>;
  credits_charged: number;
  progress: number | null;
  download_url: string | null;
  result_data: Record<string, any> | null;
  error_message: string | null;
  failure_kind: string | null;
  expires_at: string | null;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** `bin/mediasvc serve` (embedded dev server, every worker, the API) on free ports, with an account and key made by the CLI. */
export interface ServeStack {
  base: string;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  svc: Service;
  key: string;
  accountId: string;
  /** A JSON call with the account's key. */
  api(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** The balance, read with the operator CLI. */
  credits(): Promise<number>;
  /** Polls a job until it is completed or failed (every `intervalMs`, 200 by default). */
  waitJob(jobId: string, timeoutMs?: number, intervalMs?: number): Promise<JobBody>;
  /** Stops serve with SIGTERM (resolving its exit code) and starts it again on the same data. */
  restart(): Promise<number | null>;
  /** SIGKILLs serve's whole process group (API, workers, dev server, tools), then starts it again on the same data. */
  crash(): Promise<void>;
  /** Stops serve and removes its data. */
  stop(): Promise<void>;
}

/** `dataDir`: an empty folder to keep the data in (a small tmpfs, say) instead of a new temporary one. */
export async function startServeStack(opts: { name: string; plan?: string; env?: NodeJS.ProcessEnv; dataDir?: string }): Promise<ServeStack> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), `mediasvc-${opts.name}-`));
  const logFile = path.join(dataDir, 'serve.log');
  const portsEnv = async (): Promise<NodeJS.ProcessEnv> => ({
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    TEMPORAL_DEV_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    ALLOW_PRIVATE_NETWORK: '1',
    DATABASE_URL: '',
    TEMPORAL_ADDRESS: '',
    ...opts.env,
  });
  let env = await portsEnv();
  const baseOf = (e: NodeJS.ProcessEnv) => `http://127.0.0.1:${e.PORT}`;
  const start = async () => {
    const svc = startService(['serve'], env, logFile);
    await waitHealthy(baseOf(env), svc);
    return svc;
  };
  const firstStart = async (): Promise<Service> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await start();
      } catch (err) {
        // a port found free was taken before serve bound it (the dev server binds ports of its own): other ports
        if (attempt >= 3 || !fs.readFileSync(logFile, 'utf8').includes('EADDRINUSE')) throw err;
        env = await portsEnv();
      }
    }
  };
  let svc = await firstStart();
  const base = baseOf(env);
  const accountId = (await cli(env, 'accounts', 'create', '--name', opts.name, '--plan', opts.plan ?? 'pro')).pop()!;
  const key = (await cli(env, 'keys', 'create', '--account', accountId, '--name', `${opts.name} key`)).pop()!;

  // the jobs being waited on at this moment, which share the key's window
  let waiting = 0;
  const stack: ServeStack = {
    base,
    env,
    dataDir,
    svc,
    key,
    accountId,
    async api(method, p, body) {
      const res = await fetch(base + p, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
    },
    credits: async () => Number((await cli(env, 'accounts', 'credits', accountId)).pop()),
    async waitJob(jobId, timeoutMs = 180_000, intervalMs = 200) {
      let last: Record<string, unknown> = {};
      waiting += 1;
      try {
        return await waitFor(
          `job ${jobId}`,
          async () => {
            const { status, headers, body } = await stack.api('GET', `/v1/jobs/${jobId}`);
            // polls count against the key's one-minute window: past half of it, all the jobs waited on at
            // once slow to half its rate together, and past three quarters they wait for the next window,
            // so a quarter of every window is left to the test's own requests
            const limit = Number(headers.get('x-ratelimit-limit'));
            const remaining = Number(headers.get('x-ratelimit-remaining'));
            const reset = Number(headers.get('x-ratelimit-reset'));
            if (remaining < limit / 4) await new Promise((r) => setTimeout(r, Math.max(0, reset * 1000 - Date.now()) + 50));
            else if (remaining < limit / 2) await new Promise((r) => setTimeout(r, Math.ceil((120_000 * waiting) / limit)));
            if (status === 429) return undefined;
            last = body;
            return body.status === 'completed' || body.status === 'failed' ? (body as JobBody) : undefined;
          },
          timeoutMs,
          intervalMs,
        );
      } catch (err) {
        // where the job stood says whether it was stuck or only slow
        const { status, progress, created_at, started_at } = last;
        throw new Error(`${(err as Error).message} (after ${timeoutMs / 1000} s it was ${JSON.stringify({ status, progress, created_at, started_at })})`);
      } finally {
        waiting -= 1;
      }
    },
    async restart() {
      const code = await stopService(svc);
      svc = await start();
      stack.svc = svc;
      return code;
    },
    async crash() {
      svc.signal('SIGKILL');
      await svc.exited;
      svc = await start();
      stack.svc = svc;
    },
    async stop() {
      await stopService(svc);
      if (!opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return stack;
}
