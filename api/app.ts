import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { DomainError } from '../lib/errors';
import { log } from '../lib/logger';
import { rateLimitMiddleware, requireAuth } from './auth.middleware';
import type { ApiDeps, ApiState } from './context';
import { assertRegistrySound } from '../operations/registry';
import { dashboard } from './dashboard/dashboard';
import { useCursorKey } from '../lib/cursor';
import { isUnmetered } from './metering';
import { NOT_AN_OBJECT } from './validation';
import { errorMiddleware } from './error.middleware';
import { filesRoutes } from '../jobs/files.routes';
import { idempotency } from './idempotency.middleware';
import { infoRoutes } from '../info/routes';
import { jobsRoutes } from '../jobs/routes';
import { batchesRoutes } from '../batches/routes';
import { subscriptionsRoutes } from '../subscriptions/routes';
import { mcpRoutes } from './mcp/mcp.routes';
import { languagesRoutes } from '../info/languages.routes';
import { accountRoutes } from '../accounts/routes';
import { accessLog, operatorRoutes } from './observability';
import { openApiDocument } from './openapi';
import { operationsRoutes } from '../jobs/operations.routes';
import { openAiAudioRoutes } from './openai/audio.routes';
import { uploadsRoutes } from '../uploads/routes';
import { webhooksRoutes } from '../webhooks/routes';

/** Why a body could not be read, as a client error (the parser's own errors would be 500s or misleading). */
function bodyError(err: Error & { status?: number }, encoding: string, limitMb: number): DomainError {
  if (err.status === 413) return new DomainError('payload_too_large', `The request body is too large (at most ${limitMb} MB)`);
  if (err.status === 415) return new DomainError('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json');
  if (err instanceof SyntaxError && /only supports object and array/.test(err.message)) {
    return new DomainError('bad_request', NOT_AN_OBJECT);
  }
  // the JSON reader refuses prototype keys (against prototype poisoning): no parameter has that name
  if (err instanceof SyntaxError && /forbidden prototype property/.test(err.message)) {
    return DomainError.invalid('__proto__: is not a parameter of this call', [{ field: '__proto__', message: 'is not a parameter of this call' }]);
  }
  if (err instanceof SyntaxError) return new DomainError('bad_request', 'The request body is not valid JSON');
  if (encoding && encoding !== 'identity') return new DomainError('bad_request', `The request body could not be decoded as Content-Encoding ${encoding}`);
  return new DomainError('bad_request', 'The request body could not be read');
}

/** Routes whose bodies are files, read as streams by the route itself. */
const STREAMED_BODIES = /^\/v1\/(uploads|audio\/transcriptions|audio\/translations)\/?$/;

/** 405 with `Allow` for a path that exists under other methods (OPTIONS answers 204 with `Allow`). */
function methodNotAllowed(routers: Router<ApiState>[]): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allow = new Set<string>();
    for (const r of routers) for (const layer of r.match(ctx.path, ctx.method).path) for (const m of layer.methods) allow.add(m);
    if (allow.size === 0) return;
    allow.add('OPTIONS');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', [...allow].join(', '));
      ctx.status = 204;
      return;
    }
    throw new DomainError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; use ${[...allow].join(', ')}`, { allow: [...allow] });
  };
}

/** Builds the Koa app. Order: access log → errors → per-request EntityManager → rate limit → dashboard → public routes → auth → routes. */
export function createApp(deps: ApiDeps, opts: { log?: (msg: string, err: unknown) => void } = {}): Koa<ApiState> {
  assertRegistrySound();
  const app = new Koa<ApiState>({ proxy: deps.config.trustProxy });
  useCursorKey(deps.links.derive('cursors'));
  const fault = opts.log ?? ((msg, err) => log.error({ err }, msg));

  app.use(accessLog({ serverTiming: deps.config.serverTiming }));
  app.use(errorMiddleware(fault));
  app.use(async (ctx, next) => {
    ctx.state.em = deps.orm.em.fork();
    await next();
  });
  // Per key (or client IP) per minute, on the API itself; health, the OpenAPI document, result files
  // (limited per link) and the dashboard (its own sign-in limits) are not metered.
  const limiter = rateLimitMiddleware();
  app.use((ctx, next) => (isUnmetered(ctx.path) ? next() : limiter(ctx, next)));
  // The dashboard (/dashboard…) renders its own pages and errors and parses its own form bodies.
  app.use(dashboard(deps, fault));
  const jsonParser = (limitMb: number) =>
    bodyParser({ enableTypes: ['json'], jsonLimit: `${limitMb}mb`, encoding: 'utf-8', onError: (err, ctx) => {
      throw bodyError(err, ctx.get('Content-Encoding'), limitMb);
    } });
  const parseJson = jsonParser(1);
  // a batch's URL list may hold 10,000 URLs of up to 2,048 characters
  const parseBatchJson = jsonParser(24);
  // file bodies are streamed by their routes, never parsed (or buffered) here
  app.use((ctx, next) => (STREAMED_BODIES.test(ctx.path) ? next() : (ctx.path === '/v1/batches' ? parseBatchJson : parseJson)(ctx, next)));

  const pub = new Router<ApiState>();
  pub.get('/v1/openapi.json', (ctx) => {
    ctx.body = openApiDocument(deps.config.publicBaseUrl);
  });
  pub.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  pub.use(operatorRoutes(deps).routes());
  const files = filesRoutes(deps);
  const uploads = uploadsRoutes(deps);
  const audio = openAiAudioRoutes(deps);
  // MCP (Streamable HTTP): metered like REST, its own requireAuth; outside `authed`, which adds idempotency.
  const mcp = mcpRoutes(deps);
  const authed = new Router<ApiState>();
  authed.use(requireAuth());
  const idem = idempotency();
  authed.use((ctx, next) => (ctx.method === 'POST' ? idem(ctx, next) : next()));
  for (const r of [operationsRoutes(deps), batchesRoutes(deps), subscriptionsRoutes(deps), jobsRoutes(deps), infoRoutes(deps), webhooksRoutes(deps), languagesRoutes(deps), accountRoutes()]) authed.use(r.routes());

  app.use(methodNotAllowed([pub, files, uploads, audio, authed]));
  app.use(pub.routes());
  app.use(files.routes());
  app.use(uploads.routes());
  app.use(audio.routes());
  app.use(mcp.routes());
  app.use(authed.routes());

  return app;
}
