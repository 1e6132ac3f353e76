// The egress proxy's byte relay, origin → tool. A socket read in Node allocates a buffer per read,
// outside V8's heap; relaying a 50 MB source that way made the worker's V8 run a full collection of
// its whole heap every few tens of megabytes (external memory pressure), about 0.25 s of CPU per
// 50 MB beside the tool it feeds. Here the origin's socket reads into a few buffers of its own, each
// reused once the tool's socket has taken what it held, and reading pauses while none is free.
import type net from 'node:net';

const BUFFER_BYTES = 64 * 1024;
/** Buffers per relay (256 KB): up to three reads wait for the tool while the fourth is read into. */
const BUFFERS = 4;
/** An HTTP response head longer than this is refused (Node's own parser allows 16 KB). */
const MAX_HEAD_BYTES = 64 * 1024;

/** Response headers that concern one connection only: the relayed head drops them and says the connection closes. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'upgrade']);

export interface Relay {
  /** The `onread` option for `net.connect` of the origin's socket. */
  onread: net.OnReadOpts;
  /** Starts relaying from the origin's socket (created with `onread`) into the tool's. */
  attach(origin: net.Socket): void;
  /** Starts relaying from a socket made without `onread` (a tunnel through a source proxy), by its data events. */
  attachFlowing(origin: net.Socket): void;
}

/**
 * Relays what the origin's socket reads into `tool`. With `httpResponse`, the bytes are an HTTP/1.1
 * response for a forwarded request: its head is rewritten once (connection headers dropped,
 * `Connection: close` added, as the tool's connection ends with this response); the body passes as
 * it came, chunked or not.
 */
export function relayInto(tool: net.Socket, opts: { httpResponse?: boolean } = {}): Relay {
  const free: Buffer[] = Array.from({ length: BUFFERS }, () => Buffer.allocUnsafe(BUFFER_BYTES));
  let origin: net.Socket | null = null;
  let waiting = false;
  let head: Buffer | null = opts.httpResponse ? Buffer.alloc(0) : null;

  const release = (buf: Buffer) => {
    free.push(buf);
    if (waiting && origin && !origin.destroyed) {
      waiting = false;
      origin.resume();
    }
  };

  /** Collects the response head; once whole, writes it rewritten with what followed it. */
  const takeHead = (chunk: Buffer): void => {
    head = Buffer.concat([head!, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > MAX_HEAD_BYTES) origin?.destroy(new Error('the origin sent a response head over 64 KB'));
      return;
    }
    const rest = head.subarray(end + 4);
    const written = Buffer.from(rewriteHead(head.subarray(0, end).toString('latin1')), 'latin1');
    head = null;
    tool.write(rest.length ? Buffer.concat([written, rest]) : written);
  };

  return {
    onread: {
      // Node asks for the next read's buffer after each read: one free buffer is always left for it
      buffer: () => free[free.length - 1]!,
      callback: (bytes: number, buf: Uint8Array): boolean => {
        const i = free.indexOf(buf as Buffer);
        if (head || i < 0) {
          // the head is copied (small, once per response), and so would be any buffer not of this relay
          const copy = Buffer.from(buf.subarray(0, bytes));
          if (head) takeHead(copy);
          else tool.write(copy);
          return true;
        }
        const taken = free.splice(i, 1)[0]!;
        tool.write(taken.subarray(0, bytes), () => release(taken));
        if (free.length > 1) return true;
        waiting = true; // resumed by the next release: reading stops rather than take the last free buffer
        return false;
      },
    },
    attachFlowing(socket) {
      socket.on('data', (chunk: Buffer) => {
        if (head) return takeHead(chunk);
        if (!tool.write(chunk)) {
          socket.pause();
          tool.once('drain', () => socket.resume());
        }
      });
      this.attach(socket);
      socket.resume();
    },
    attach(socket) {
      origin = socket;
      let ended = false;
      // the origin's end: the tool gets what is still queued for it, then the end
      socket.on('end', () => {
        ended = true;
        tool.end();
      });
      socket.on('error', () => undefined); // 'close' follows, with hadError
      socket.on('close', (hadError) => {
        if (hadError || !ended) tool.destroy();
      });
      // a tool that hangs up (ffmpeg done with its seek) ends the fetch from the origin too
      tool.on('error', () => undefined);
      tool.on('close', () => socket.destroy());
    },
  };
}

/** The response head for the tool: connection headers dropped, `Connection: close` added. */
export function rewriteHead(raw: string): string {
  const [status, ...lines] = raw.split('\r\n');
  const kept = lines.filter((line) => !CONNECTION_HEADERS.has(line.slice(0, line.indexOf(':')).trim().toLowerCase()));
  return [status, ...kept, 'Connection: close', '', ''].join('\r\n');
}
