// `bin/mediasvc mcp`: an MCP server on stdio that forwards every request to a running API's /mcp
// (MEDIASVC_URL, MEDIASVC_API_KEY) over Streamable HTTP. No database, no Temporal: the API decides
// everything (auth, rate limits, credits); this relays tools, progress, resources and errors.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  EmptyResultSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  McpError,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { PACKAGE_VERSION } from './package-version';
import { ProtocolError, toolErrorResult } from './protocol-error';
import { WAIT_SECONDS } from './tool-schemas';

export const DEFAULT_MEDIASVC_URL = 'http://127.0.0.1:8080';
/** A tool call may wait up to WAIT_SECONDS.max for its job; allow that and a margin for the reply. */
const TOOL_CALL_TIMEOUT_MS = (WAIT_SECONDS.max + 60) * 1000;
/** A client that does not answer a ping within this delays its tool result no longer. */
const CLIENT_PING_TIMEOUT_MS = 5_000;

/** The API refused an HTTP request (401, 403, 429, …); `detail` is its sentence. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'ApiRefusal';
  }
}

/** fetch for the SDK transport: a refused POST becomes an ApiRefusal carrying the API's `detail`. */
async function fetchWithRefusals(url: string | URL, init?: RequestInit): Promise<Response> {
  const res = await fetch(url, init);
  if (res.ok || init?.method !== 'POST') return res;
  const text = await res.text();
  let detail = text;
  try {
    detail = (JSON.parse(text) as { detail?: string }).detail ?? text;
  } catch {
    // not JSON: keep the text
  }
  throw new ApiRefusal(res.status, detail || `HTTP ${res.status}`);
}

/** An upstream failure as the error this server answers with (without the SDK's "MCP error N:" prefix twice). */
function relayed(err: unknown): unknown {
  if (err instanceof McpError) return new ProtocolError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data);
  if (err instanceof ApiRefusal) return new ProtocolError(ErrorCode.InternalError, err.detail, { status: err.status });
  return err;
}

const relay = <T>(call: Promise<T>): Promise<T> => call.catch((err: unknown) => Promise.reject(relayed(err)));

/**
 * Resolves once the client has handled every message sent before. The TypeScript SDK handles a
 * notification a microtask after reading it but a response at once, so a progress notification read
 * in the same chunk as its response finds its token retired and is dropped (some clients even close
 * the connection over it). The client answers a ping only after the notifications read before it.
 */
async function clientCaughtUp(server: Server): Promise<void> {
  await server.request({ method: 'ping' }, EmptyResultSchema, { timeout: CLIENT_PING_TIMEOUT_MS }).catch(() => undefined);
}

/** Connects to the API's /mcp and serves its tools and resources on stdin/stdout until stdin ends. */
export async function runStdioBridge(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const key = env.MEDIASVC_API_KEY;
  if (!key) throw new Error('MEDIASVC_API_KEY is not set: create a key with `bin/mediasvc keys create` and pass it in the environment');
  const endpoint = new URL(`${(env.MEDIASVC_URL || DEFAULT_MEDIASVC_URL).replace(/\/+$/, '')}/mcp`);

  const upstream = new Client({ name: 'mediasvc-mcp-stdio', version: PACKAGE_VERSION });
  try {
    await upstream.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${key}` } }, fetch: fetchWithRefusals }));
  } catch (err) {
    throw new Error(`could not connect to ${endpoint.href}: ${err instanceof Error ? err.message : String(err)}`);
  }

  const server = new Server(upstream.getServerVersion() ?? { name: 'mediasvc', version: PACKAGE_VERSION }, {
    capabilities: upstream.getServerCapabilities() ?? {},
    instructions: upstream.getInstructions(),
  });
  const signalOf = (extra: { signal: AbortSignal }) => ({ signal: extra.signal });
  server.setRequestHandler(ListToolsRequestSchema, (req, extra) => relay(upstream.request(req, ListToolsResultSchema, signalOf(extra))));
  server.setRequestHandler(ListResourcesRequestSchema, (req, extra) => relay(upstream.request(req, ListResourcesResultSchema, signalOf(extra))));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (req, extra) => relay(upstream.request(req, ListResourceTemplatesResultSchema, signalOf(extra))));
  server.setRequestHandler(ReadResourceRequestSchema, (req, extra) => relay(upstream.request(req, ReadResourceResultSchema, signalOf(extra))));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const token = req.params._meta?.progressToken;
    let notified = false;
    try {
      return await upstream.request(req, CallToolResultSchema, {
        signal: extra.signal,
        timeout: TOOL_CALL_TIMEOUT_MS,
        // The upstream call carries its own token; each of its notifications goes out under the caller's.
        onprogress:
          token === undefined
            ? undefined
            : (p) => {
                notified = true;
                extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } }).catch(() => undefined);
              },
      });
    } catch (err) {
      // A refusal of the call itself (rate limit, key revoked) is a tool error the agent can act on.
      if (err instanceof ApiRefusal) return toolErrorResult({ status: err.status, detail: err.detail });
      throw relayed(err);
    } finally {
      if (notified) await clientCaughtUp(server);
    }
  });

  const stdinEnded = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport());
  await stdinEnded;
  await server.close();
  await upstream.close();
}
