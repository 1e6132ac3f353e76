// Streamable HTTP at /mcp. Stateless: each POST gets its own server and transport, bound to the
// key's account; a tool's progress notifications stream on that POST's SSE response. Auth and the
// rate limit are the app's middleware, so a bad key is a 401 before any MCP message is read.
import Router from '@koa/router';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireAuth } from '../auth.middleware';
import { accountOf, type ApiDeps, type ApiState } from '../context';
import { createMcpServer } from './server';

export function mcpRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  router.post('/mcp', requireAuth(), async (ctx) => {
    const server = createMcpServer({ deps, em: ctx.state.em, account: accountOf(ctx) });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    ctx.respond = false;
    ctx.res.on('close', () => {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    // The app's body parser has read a JSON body already; anything else the transport reads (and refuses) itself.
    const parsed = ctx.request.is('application/json') ? (ctx.request as { body?: unknown }).body : undefined;
    await transport.handleRequest(ctx.req, ctx.res, parsed);
  });

  // No sessions and no server-initiated stream: GET and DELETE are 405, which MCP clients expect.
  router.all('/mcp', requireAuth(), (ctx) => {
    ctx.set('Allow', 'POST');
    ctx.status = 405;
    ctx.body = { detail: 'This MCP endpoint is stateless: send JSON-RPC messages with POST (there is no server stream or session to open or end)' };
  });

  return router;
}
