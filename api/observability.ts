// Request ids, the access log and HTTP metrics (outermost middleware), and the operator endpoints
// /readyz and /metrics.
import crypto from 'node:crypto';
import Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { diskReadiness } from '../lib/disk-space';
import { DomainError } from '../lib/errors';
import { log } from '../lib/logger';
import { RequestStages } from '../lib/request-stages';
import { openBreakers } from '../platforms/breaker.repository';
import { currentYtdlp } from '../engines/ytdlp/current-version';
import { cachedYtdlpReport, type YtdlpReport } from '../engines/ytdlp/report';
import { httpDuration, httpRequests, METRICS_CONTENT_TYPE, metricsText } from '../lib/metrics';
import type { ApiDeps, ApiState } from './context';
import { json, registry } from './openapi';

/** A client's X-Request-Id is kept when it is a plain token; anything else is replaced. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Polled by probes and scrapers: their access lines are debug, not info. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/** The route pattern, never the raw path (ids and file-link tokens stay out of labels and logs). */
function routeOf(ctx: Koa.ParameterizedContext<ApiState>): string {
  const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  if (typeof matched === 'string') return matched;
  if (ctx.path === '/dashboard' || ctx.path.startsWith('/dashboard/')) return '/dashboard';
  return 'unmatched';
}

/** Outermost: sets X-Request-Id, then writes one access-log line and the HTTP metrics once the response is settled. */
export function accessLog(opts: { serverTiming?: boolean } = {}): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    const start = performance.now();
    ctx.state.stages = new RequestStages();
    const given = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(given) ? given : crypto.randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      ctx.state.stages.mark('unwind');
      const seconds = (performance.now() - start) / 1000;
      const route = routeOf(ctx);
      httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      httpDuration.observe({ method: ctx.method, route }, seconds);
      const line = {
        req_id: requestId,
        method: ctx.method,
        route,
        status: ctx.status,
        ms: Math.round(seconds * 10_000) / 10,
        account_id: ctx.state.auth?.ok ? ctx.state.auth.accountId : ctx.state.account?.id,
        key_prefix: ctx.state.auth?.ok ? ctx.state.auth.keyPrefix : undefined,
      };
      if (PROBES.has(ctx.path)) log.debug(line, 'request');
      else log.info(line, 'request');
      ctx.state.stages.mark('log');
      if (opts.serverTiming && !ctx.headerSent) ctx.set('Server-Timing', ctx.state.stages.header());
    }
  };
}

const ReadySchema = z.object({
  status: z.enum(['ok', 'degraded', 'unavailable']).meta({ description: '"degraded": every dependency answers, but a platform refuses the service (see platforms; its jobs wait), or yt-dlp has no working JS runtime (see js_runtime)' }),
  database: z.string().meta({ description: '"ok", or why the database is not reachable' }),
  temporal: z.string().meta({ description: '"ok", or why the Temporal frontend is not reachable' }),
  storage: z.string().meta({ description: '"ok", or why the bucket (STORAGE=s3) does not answer; always "ok" with local storage' }),
  disk: z.string().meta({ description: '"ok", or how little space is left under DATA_DIR (below MIN_FREE_DISK_MB new steps wait)' }),
  yt_dlp: z.string().meta({ description: 'The yt-dlp version new steps use (mediasvc tools yt-dlp update changes it without a restart)' }),
  js_runtime: z
    .object({
      runtime: z.string().nullable().meta({ description: 'The JS runtime yt-dlp solves YouTube\'s challenges with ("deno"), as its own report names it; null: none found' }),
      version: z.string().nullable(),
      supported: z.boolean().meta({ description: 'Whether yt-dlp counts that runtime as supported (an older one it ignores)' }),
      solves: z.boolean().meta({ description: 'Whether one of yt-dlp\'s JS challenge providers is available; false: YouTube formats go missing, and status is "degraded"' }),
      runtimes: z.string().nullable().meta({ description: 'yt-dlp\'s own "JS runtimes:" line' }),
      challenge_providers: z.string().nullable().meta({ description: 'yt-dlp\'s own "JS Challenge Providers:" line' }),
      po_token_providers: z.string().nullable().meta({ description: 'yt-dlp\'s own "PO Token Providers:" line (plugins included)' }),
      ejs: z.string().nullable().meta({ description: 'The yt-dlp-ejs version yt-dlp loaded' }),
      checked_at: z.string().meta({ description: 'When yt-dlp was asked (at start, and when the version in use changes)' }),
      error: z.string().optional().meta({ description: 'Why yt-dlp gave no report' }),
    })
    .nullable()
    .meta({ description: "yt-dlp's report of its JavaScript runtime for YouTube's challenges, for the version in use; null until the first report is in" }),
  platforms: z
    .array(
      z.object({
        platform: z.string(),
        since: z.string().meta({ description: 'When its circuit breaker opened (ISO 8601)' }),
        next_probe_at: z.string().nullable().meta({ description: 'When one waiting job next goes as a probe' }),
        reason: z.string().nullable().meta({ description: 'Its last refusal, as a person reads it' }),
      }),
    )
    .meta({ description: 'Platforms refusing the service now (circuit breaker open): their jobs wait, pending, instead of failing' }),
});

registry.registerPath({
  method: 'get',
  path: '/readyz',
  operationId: 'ready',
  summary: 'Readiness: the database, Temporal and the bucket answer (never rate-limited)',
  security: [],
  responses: {
    200: { description: 'Ready to serve', ...json(ReadySchema) },
    503: { description: 'A dependency is not reachable', ...json(ReadySchema) },
  },
});

/** The readiness view of yt-dlp's report. */
function jsRuntimeOf(r: YtdlpReport | null) {
  if (!r) return null;
  return {
    runtime: r.runtime?.name ?? null,
    version: r.runtime?.version ?? null,
    supported: r.runtime?.supported ?? false,
    solves: r.solves,
    runtimes: r.lines.jsRuntimes?.replace(/^.*?JS runtimes:\s*/, '') ?? null,
    challenge_providers: r.lines.jsChallengeProviders?.replace(/^.*?JS Challenge Providers:\s*/, '') ?? null,
    po_token_providers: r.lines.poTokenProviders?.replace(/^.*?PO Token Providers:\s*/, '') ?? null,
    ejs: r.ejs,
    checked_at: r.checkedAt,
    ...(r.error ? { error: r.error } : {}),
  };
}

async function probe(check: () => Promise<unknown>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([check(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)))]);
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    clearTimeout(timer);
  }
}

/** /readyz (database, Temporal, the bucket) and, when METRICS_TOKEN is set, /metrics for a bearer of that token. */
export function operatorRoutes(deps: Pick<ApiDeps, 'orm' | 'orchestrator' | 'config' | 'storage'>): Router<ApiState> {
  const router = new Router<ApiState>();
  router.get('/readyz', async (ctx) => {
    const [database, temporal, storage] = await Promise.all([
      probe(() => deps.orm.em.fork().getConnection().execute('select 1'), 2000),
      probe(() => deps.orchestrator.checkReachable(), 2000),
      probe(() => deps.storage.checkReachable(AbortSignal.timeout(2000)), 2000),
    ]);
    const disk = diskReadiness(deps.config.dataDir, deps.config.minFreeDiskMb);
    const ok = database === 'ok' && temporal === 'ok' && storage === 'ok' && disk === 'ok';
    const platforms = database === 'ok' ? await openBreakers(deps.orm.em.fork()).catch(() => []) : [];
    // yt-dlp's cached report: YouTube without a working JS runtime loses formats, so the service is degraded
    const js = jsRuntimeOf(cachedYtdlpReport(deps.config));
    const degraded = platforms.length > 0 || (js !== null && !js.solves);
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? (degraded ? 'degraded' : 'ok') : 'unavailable', database, temporal, storage, disk, yt_dlp: currentYtdlp(deps.config).version, js_runtime: js, platforms };
  });
  router.get('/metrics', async (ctx) => {
    const token = deps.config.metricsToken;
    if (!token) throw DomainError.notFound('Metrics are not served on this port: set METRICS_TOKEN, or read them on METRICS_PORT');
    const given = Buffer.from(ctx.get('Authorization'));
    const want = Buffer.from(`Bearer ${token}`);
    if (given.length !== want.length || !crypto.timingSafeEqual(given, want)) throw new DomainError('unauthenticated', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
    ctx.type = METRICS_CONTENT_TYPE;
    ctx.body = await metricsText();
  });
  return router;
}
