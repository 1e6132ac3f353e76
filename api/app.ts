import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import type { ApiDeps, ApiState } from './context';
import { commentsRoutes } from './comments.routes';
import { downloadRoutes } from './download.routes';
import { errorMiddleware } from './error.middleware';
import { filesRoutes } from './files.routes';
import { fingerprintRoutes } from './fingerprint.routes';
import { infoRoutes } from './info.routes';
import { jobsRoutes } from './jobs.routes';
import { speechRoutes } from './speech.routes';
import { openApiDocument } from './openapi';
import { previewRoutes } from './preview.routes';
import { webhooksRoutes } from './webhooks.routes';
import { rateLimitMiddleware, requireAuth } from './auth.middleware';
import { idempotency } from './idempotency.middleware';

/** Builds the Koa app. Order: errors → per-request EntityManager → rate limit → public routes → auth → routes. */
export function createApp(deps: ApiDeps, opts: { log?: (msg: string, err: unknown) => void } = {}): Koa<ApiState> {
  const app = new Koa<ApiState>({ proxy: deps.config.trustProxy });
  const log = opts.log ?? ((msg, err) => console.error(msg, err));

  app.use(errorMiddleware(log));
  app.use(async (ctx, next) => {
    ctx.state.em = deps.orm.em.fork();
    await next();
  });
  app.use(rateLimitMiddleware());
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '1mb', encoding: 'utf-8' }));

  const pub = new Router<ApiState>();
  pub.get('/v1/openapi.json', (ctx) => {
    ctx.body = openApiDocument(deps.config.publicBaseUrl);
  });
  pub.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  app.use(pub.routes());
  app.use(filesRoutes(deps).routes());

  const authed = new Router<ApiState>();
  authed.use(requireAuth());
  const idem = idempotency();
  authed.use((ctx, next) => (ctx.method === 'POST' ? idem(ctx, next) : next()));
  for (const r of [jobsRoutes(deps), downloadRoutes(deps), infoRoutes(deps), commentsRoutes(deps), webhooksRoutes(deps), speechRoutes(deps), previewRoutes(deps), fingerprintRoutes(deps)]) authed.use(r.routes());
  app.use(authed.routes());

  return app;
}
