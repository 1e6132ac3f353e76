import http from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * The API's HTTP server. Requests Node's parser rejects before Koa sees them (a request line or
 * headers over 16 KB, say) still get a JSON body with a `detail`, like every other error.
 */
export function createApiServer(handler?: http.RequestListener): http.Server {
  const server = http.createServer(handler);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const [status, detail] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request line and headers are too large (at most 16 KB together); send long values in a JSON body']
        : [400, 'The request is malformed HTTP'];
    const body = JSON.stringify({ detail });
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  return server;
}
