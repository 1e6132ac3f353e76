import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { DomainError } from '../lib/errors';
import { rateLimitMiddleware, requireAuth } from './auth.middleware';
import type { ApiDeps, ApiState } from './context';
import { errorMiddleware } from './error.middleware';
import { filesRoutes } from './files.routes';
import { idempotency } from './idempotency.middleware';
import { infoRoutes } from './info.routes';
import { jobsRoutes } from './jobs.routes';
import { mcpRoutes } from './mcp/mcp.routes';
import { languagesRoutes } from './languages.routes';
import { accountRoutes } from './account.routes';
import { openApiDocument } from './openapi';
import { operationsRoutes } from './operations.routes';
import { webhooksRoutes } from './webhooks.routes';

/** Why a body could not be read, as a client error (the parser's own errors would be 500s or misleading). */
function bodyError(err: Error & { status?: number }, encoding: string): DomainError {
  if (err.status === 413) return new DomainError('payload_too_large', 'The request body is too large (at most 1 MB)');
  if (err.status === 415) return new DomainError('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json');
  if (err instanceof SyntaxError && /only supports object and array/.test(err.message)) {
    return new DomainError('bad_request', 'The request body is valid JSON but not a JSON object; send an object such as {"url": "…"}');
  }
  if (err instanceof SyntaxError) return new DomainError('bad_request', 'The request body is not valid JSON');
  if (encoding && encoding !== 'identity') return new DomainError('bad_request', `The request body could not be decoded as Content-Encoding ${encoding}`);
  return new DomainError('bad_request', 'The request body could not be read');
}

const UNMETERED_EXACT = new Set(['/healthz', '/readyz', '/v1/openapi.json']);
const UNMETERED_PREFIXES = ['/v1/files/', '/dashboard'];

export function isUnmetered(path: string): boolean {
  return UNMETERED_EXACT.has(path) || UNMETERED_PREFIXES.some((p) => path.startsWith(p));
}

/** Builds the Koa app. Order: errors → per-request EntityManager → rate limit → public routes → auth → routes. */
export function createApp(deps: ApiDeps, opts: { log?: (msg: string, err: unknown) => void } = {}): Koa<ApiState> {
  const app = new Koa<ApiState>({ proxy: deps.config.trustProxy });
  const log = opts.log ?? ((msg, err) => console.error(msg, err));

  app.use(errorMiddleware(log));
  app.use(async (ctx, next) => {
    ctx.state.em = deps.orm.em.fork();
    await next();
  });
  // Per key (or client IP) per minute, on the API itself; health, the OpenAPI document, result files
  // (limited per link) and the dashboard (its own sign-in limits) are not metered.
  const limiter = rateLimitMiddleware();
  app.use((ctx, next) => (isUnmetered(ctx.path) ? next() : limiter(ctx, next)));
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '1mb', encoding: 'utf-8', onError: (err, ctx) => {
    throw bodyError(err, ctx.get('Content-Encoding'));
  } }));

  const pub = new Router<ApiState>();
  pub.get('/v1/openapi.json', (ctx) => {
    ctx.body = openApiDocument(deps.config.publicBaseUrl);
  });
  pub.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  app.use(pub.routes());
  app.use(filesRoutes(deps).routes());
  // MCP (Streamable HTTP): metered like REST, its own requireAuth; outside `authed`, which adds idempotency.
  app.use(mcpRoutes(deps).routes());

  const authed = new Router<ApiState>();
  authed.use(requireAuth());
  const idem = idempotency();
  authed.use((ctx, next) => (ctx.method === 'POST' ? idem(ctx, next) : next()));
  for (const r of [operationsRoutes(deps), jobsRoutes(deps), infoRoutes(deps), webhooksRoutes(deps), languagesRoutes(deps), accountRoutes()]) authed.use(r.routes());
  app.use(authed.routes());

  return app;
}
