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
