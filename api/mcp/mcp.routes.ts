// Streamable HTTP at /mcp. Stateless: each POST gets its own server and transport, bound to the
// key's account; a tool's progress notifications stream on that POST's SSE response. Auth and the
// rate limit are the app's middleware, so a bad key is a 401 before any MCP message is read; every
// further message of a JSON-RPC batch counts as one more request.
import Router from '@koa/router';
import type Koa from 'koa';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { countMoreRequests, rateLimited, requireAuth } from '../auth.middleware';
import { accountOf, type ApiDeps, type ApiState } from '../context';
import { ProtocolError } from './protocol-error';
import { createMcpServer } from './server';

/** JSON-RPC code of a batch message past the key's per-minute limit (the server-error range; `data.status` is 429). */
export const RATE_LIMITED = -32029;
// A refused request is renamed to this method, so the server answers it with the error in the batch's own response.
const REFUSED_METHOD = 'mediasvc/refused-rate-limited';
const RefusedRequestSchema = z.object({ method: z.literal(REFUSED_METHOD) });

interface Refusal {
  detail: string;
  retryAfterSeconds: number;
}

/**
 * Meters a JSON-RPC batch message by message: the first was counted with the HTTP request, each
 * further one counts now. Requests past the limit are kept (to be answered with the 429 error);
 * notifications past it are dropped, as they have no answer.
 */
async function meterBatch(ctx: Koa.ParameterizedContext<ApiState>, body: unknown): Promise<{ body: unknown; refusal: Refusal | null }> {
  if (!Array.isArray(body) || body.length < 2) return { body, refusal: null };
  const { admitted, window } = await countMoreRequests(ctx, body.length - 1);
  if (admitted === body.length - 1) return { body, refusal: null };
  const err = rateLimited(window);
  const refusal = { detail: err.detail, retryAfterSeconds: Number(err.extra.retryAfterSeconds ?? 1) };
  const metered = body.flatMap((m: unknown, i) => {
    if (i <= admitted) return [m];
    const id = (m as { id?: unknown } | null)?.id;
    return id === undefined || id === null ? [] : [{ jsonrpc: '2.0', id, method: REFUSED_METHOD }];
  });
  return { body: metered, refusal };
}

export function mcpRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  router.post('/mcp', requireAuth(), async (ctx) => {
    const server = createMcpServer({ deps, em: ctx.state.em, account: accountOf(ctx) });
    // The app's body parser has read a JSON body already; anything else the transport reads (and refuses) itself.
    const { body, refusal } = await meterBatch(ctx, ctx.request.is('application/json') ? (ctx.request as { body?: unknown }).body : undefined);
    server.setRequestHandler(RefusedRequestSchema, () => {
      if (!refusal) throw new ProtocolError(-32601, `Method not found: ${REFUSED_METHOD}`);
      throw new ProtocolError(RATE_LIMITED, refusal.detail, { status: 429, retry_after_seconds: refusal.retryAfterSeconds });
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    ctx.respond = false;
    ctx.res.on('close', () => {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, body);
  });

  // No sessions and no server-initiated stream: GET and DELETE are 405, which MCP clients expect.
  router.all('/mcp', requireAuth(), (ctx) => {
    ctx.set('Allow', 'POST');
    ctx.status = 405;
    ctx.body = { detail: 'This MCP endpoint is stateless: send JSON-RPC messages with POST (there is no server stream or session to open or end)' };
  });

  return router;
}
