import http from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Room for the request line and headers together: a `url` query parameter at its longest (2,048
 * UTF-16 units, up to 9 bytes each percent-encoded: 18 KB) plus ordinary headers, where Node's
 * default (16 KB) refused some valid requests.
 */
export const MAX_HEADER_BYTES = 32 * 1024;

/**
 * The API's HTTP server. Requests Node's parser rejects before Koa sees them (a request line or
 * headers over 32 KB, say) still get a JSON body with a `detail`, like every other error.
 */
export function createApiServer(handler?: http.RequestListener): http.Server {
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const [status, detail] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request line and headers are too large (at most 32 KB together); send long values in a JSON body']
        : [400, 'The request is malformed HTTP'];
    const body = JSON.stringify({ detail });
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  return server;
}
