// One MCP server for one caller (stateless: built per HTTP request, bound to the key's account).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '../../lib/errors';
import { OPERATIONS } from '../../operations/registry';
import { STATUS_OF } from '../error.middleware';
import type { McpCaller } from './job-results';
import { ProtocolError, RESOURCE_NOT_FOUND, toolErrorResult } from './protocol-error';
import { PACKAGE_VERSION } from './package-version';
import { listResources, readResource, RESOURCE_TEMPLATES } from './resources';
import { TOOLS, TOOLS_BY_NAME, type ToolCall } from './tools';
import { log } from '../../lib/logger';

const INSTRUCTIONS =
  `Media tools for video and audio at URLs: metadata (get_video_info), ${Object.values(OPERATIONS).map((op) => `${op.title.toLowerCase()} (${op.mcp.tool})`).join(', ')}. ` +
  'Each tool\'s description states its credit cost; reads (get_job, list_jobs, get_account) are free and a failed job is refunded. ' +
  'Create tools wait up to wait_seconds (default 60) for their job, reporting progress; if it is still running they return its job_id for get_job. ' +
  'Text outputs are readable in full as the resource job://{job_id}/output.';

/** A DomainError as an error result with REST's detail sentence (MCP: tool errors are results, not protocol errors). */
function toolError(err: unknown, tool: string): CallToolResult {
  if (!(err instanceof DomainError)) {
    log.error({ err, tool }, 'MCP tool failed');
    return { isError: true, content: [{ type: 'text', text: `Internal error while running ${tool}; the call was not completed. Try again, and contact support if it persists.` }] };
  }
  const status = STATUS_OF[err.kind];
  return toolErrorResult({ status, detail: err.detail, ...(err.extra.errors ? { errors: err.extra.errors } : {}) });
}

/** A DomainError as a JSON-RPC error of a resource read. */
function resourceError(err: unknown): unknown {
  if (!(err instanceof DomainError)) return err;
  if (err.kind === 'not_found') return new ProtocolError(RESOURCE_NOT_FOUND, err.detail);
  return new ProtocolError(STATUS_OF[err.kind] < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, err.detail);
}

// The low-level Server rather than McpServer: tool schemas and argument validation come from the
// operation registry, so a bad argument gets REST's 422 sentence instead of the SDK's own message.
export function createMcpServer(caller: McpCaller): Server {
  const server = new Server({ name: 'mediasvc', title: 'mediasvc media processing', version: PACKAGE_VERSION }, {
    capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
    instructions: INSTRUCTIONS,
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS.map((t) => t.tool) }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const def = TOOLS_BY_NAME.get(req.params.name);
    if (!def) throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool ${req.params.name}; the tools are ${[...TOOLS_BY_NAME.keys()].join(', ')}`);
    const token = req.params._meta?.progressToken;
    const call: ToolCall = {
      signal: extra.signal,
      progress:
        token === undefined
          ? undefined
          : (progress, message) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100, message } }),
    };
    try {
      return await def.run(caller, req.params.arguments ?? {}, call);
    } catch (err) {
      return toolError(err, def.tool.name);
    }
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ListResourcesRequestSchema, () => listResources(caller));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    try {
      return await readResource(caller, req.params.uri);
    } catch (err) {
      throw resourceError(err);
    }
  });
  return server;
}
