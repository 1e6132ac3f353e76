import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** JSON-RPC code for an unknown resource (MCP spec, Resources: error handling). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error answered as `{code, message, data}` with the plain sentence as message (the SDK's
 * McpError would put "MCP error N:" into the message on the wire, and a client adds it again).
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** Where an error result carries REST's error body for programs (`_meta`: structuredContent must match the tool's outputSchema). */
export const ERROR_META_KEY = 'mediasvc/error';

/** A tool error: the detail sentence for the model, REST's error body (status, detail, errors) for programs. */
export function toolErrorResult(error: { status: number; detail: string; errors?: unknown[] }): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: error.detail }], _meta: { [ERROR_META_KEY]: error } };
}
