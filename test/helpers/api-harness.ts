import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/core';
import { createApp } from '../../api/app';
import { createApiServer } from '../../api/http-server';
import { JobDispatcher } from '../../jobs/dispatcher';
import type { PlanName } from '../../accounts/entity';
import { createAccount, createApiKey } from '../../accounts/repository';
import { adjustCredits, getBalance } from '../../credits/repository';
import { closeKeyUsage } from '../../keys/usage.repository';
import { rateLimitsWritten } from '../../db/rate-limit.repository';
import { openOrm, type Dialect } from '../../db/orm';
import { loadConfig, type Config } from '../../lib/config';
import { FileLinks } from '../../lib/file-links';
import type { MediaJobInput } from '../../jobs/types';
import type { VideoInfo } from '../../lib/video-info';
import type { Orchestrator } from '../../jobs/orchestrator';
import { createSpeechServices } from '../../engines/speech/services';
import { LocalStorage, Storage } from '../../engines/storage';
import { sharedPostgres, type TestPostgres } from './postgres';

/** A recorded start; params typed loosely so tests can read any operation's fields. */
export type StartedJob = MediaJobInput & { params: Record<string, any> };

/** Orchestrator stand-in for API tests: records starts, answers info from a settable function. */
export class StubOrchestrator implements Orchestrator {
  started: StartedJob[] = [];
  failStart: Error | null = null;
  info: (url: string) => Promise<VideoInfo> = async () => {
    throw new Error('no info stub set');
  };
  async startJob(input: MediaJobInput): Promise<boolean> {
    if (this.failStart) throw this.failStart;
    if (this.started.some((s) => s.jobId === input.jobId)) return false;
    this.started.push(input as StartedJob);
    return true;
  }
  cancelled: string[] = [];
  async cancelJob(input: MediaJobInput): Promise<boolean> {
    this.cancelled.push(input.jobId);
    return true;
  }
  fetchInfo(url: string): Promise<VideoInfo> {
    return this.info(url);
  }
  async jobProgress(): Promise<number | null> {
    return null;
  }
  async jobDetails(): Promise<null> {
    return null;
  }
  async checkReachable(): Promise<void> {
    // the stub engine is always there
  }
  async awaitJobEnd(): Promise<'unknown'> {
    // runs no workflows: the row is the record
    return 'unknown';
  }
  async startBatch(): Promise<void> {}
  async cancelBatch(): Promise<boolean> {
    return false;
  }
  async upsertSubscriptionSchedule(): Promise<void> {}
  async deleteSubscriptionSchedule(): Promise<void> {}
  async triggerSubscriptionSchedule(): Promise<void> {}
  async pauseSchedule(): Promise<void> {}
}

export interface Response {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface ApiHarness {
  dialect: Dialect;
  orm: MikroORM;
  config: Config;
  orchestrator: StubOrchestrator;
  links: FileLinks;
  storage: Storage;
  baseUrl: string;
  request(method: string, path: string, opts?: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<Response>;
  newAccount(plan?: PlanName, credits?: number): Promise<{ accountId: string; key: string; keyId: string }>;
  balance(accountId: string): Promise<number>;
  close(): Promise<void>;
}

/** Waits out the last seconds of a minute, so a counted loop does not straddle two rate windows. */
export async function freshRateWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 8_000) await new Promise((r) => setTimeout(r, left + 50));
}

let pg: TestPostgres | null = null;
let pgUsers = 0;
let dbCounter = 0;
let ipCounter = 0;

/** A real Koa app on a real database (fresh per harness), listening on an ephemeral port. */
export async function startApiHarness(dialect: Dialect): Promise<ApiHarness> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-api-'));
  let databaseUrl: string | undefined;
  if (dialect === 'postgresql') {
    pg ??= await sharedPostgres();
    pgUsers++;
    databaseUrl = await pg.createDatabase(`api_${process.pid}_${++dbCounter}`);
  }
  const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ALLOW_PRIVATE_NETWORK: '1', PORT: '0', TRUST_PROXY: '1' });
  // each harness has a fresh DATA_DIR, so its generated development key is expected
  const orm = await openOrm(config, { migrate: true, warn: () => undefined });
  const orchestrator = new StubOrchestrator();
  const storage = new LocalStorage(config);
  const server = createApiServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const links = new FileLinks('test-secret', baseUrl);
  config.publicBaseUrl = baseUrl;
  const app = createApp({ orm, config, orchestrator, dispatcher: new JobDispatcher(orchestrator), links, storage, speech: createSpeechServices(config) }, { log: () => undefined });
  server.on('request', app.callback());

  return {
    dialect,
    orm,
    config,
    orchestrator,
    links,
    storage,
    baseUrl,
    async request(method, p, opts = {}) {
      // each request gets its own client IP (TRUST_PROXY is on) unless the test names one,
      // so unauthenticated calls in different tests do not share one per-IP window
      const headers: Record<string, string> = { 'x-forwarded-for': `203.0.113.${++ipCounter % 250}`, ...(opts.headers ?? {}) };
      if (opts.key) headers.authorization = `Bearer ${opts.key}`;
      let body: string | undefined = opts.rawBody;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(baseUrl + p, { method, headers, body, redirect: 'manual' });
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async newAccount(plan = 'starter', credits) {
      const em = orm.em.fork();
      const account = await createAccount(em, `acct-${Math.random().toString(36).slice(2, 8)}`, plan);
      if (credits !== undefined) await adjustCredits(em, account.id, credits - (await getBalance(em, account.id)), 'test setup');
      const { key, record } = await createApiKey(em, account.id, 'test');
      return { accountId: account.id, key, keyId: record.id };
    },
    balance: (accountId) => getBalance(orm.em.fork(), accountId),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await closeKeyUsage(orm.em);
      await rateLimitsWritten(orm.em);
      await orm.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (dialect === 'postgresql' && --pgUsers === 0 && pg) {
        await pg.stop();
        pg = null;
      }
    },
  };
}
