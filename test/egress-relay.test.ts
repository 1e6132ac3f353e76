// The egress proxy's relay, origin → tool, through its reused read buffers: every byte arrives in
// order whatever the body's framing and however slowly the tool reads, the tool's connection is told
// it closes, and a tool that hangs up ends the fetch from the origin.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { startEgressProxy, type EgressProxy } from '../engines/egress/egress-proxy';

const BODY = crypto.randomBytes(6_000_000);

interface Fetched {
  head: string;
  body: Buffer;
}

/** One request through the proxy on a raw socket, read `delayMs` apart in `readBytes` steps (a slow tool) or as it comes. */
function fetchThrough(proxy: EgressProxy, target: string, opts: { method?: string; readBytes?: number; delayMs?: number; stopAfter?: number } = {}): Promise<Fetched> {
  const proxyUrl = new URL(proxy.urlFor('relay-test'));
  const auth = Buffer.from(`${proxyUrl.username}:${proxyUrl.password}`).toString('base64');
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(proxyUrl.port), '127.0.0.1');
    const chunks: Buffer[] = [];
    let received = 0;
    socket.write(`${opts.method ?? 'GET'} ${target} HTTP/1.1\r\nHost: ${new URL(target).host}\r\nProxy-Authorization: Basic ${auth}\r\nConnection: keep-alive\r\n\r\n`);
    const done = () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      resolve({ head: all.subarray(0, end).toString('latin1'), body: all.subarray(end + 4) });
    };
    const slowly = () => {
      let chunk: Buffer | null;
      while ((chunk = socket.read(opts.readBytes) as Buffer | null) !== null) {
        chunks.push(chunk);
        received += chunk.length;
        if (opts.stopAfter && received >= opts.stopAfter) return void socket.destroy();
        return void setTimeout(slowly, opts.delayMs);
      }
      socket.once('readable', slowly);
    };
    if (opts.readBytes) slowly();
    else socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', done);
    socket.on('close', () => opts.stopAfter && done());
    socket.on('error', reject);
  });
}

/** De-chunks an HTTP/1.1 chunked body. */
function dechunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!size) return Buffer.concat(parts);
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

describe('egress proxy relay: reused read buffers, origin to tool', function () {
  this.timeout(60_000);
  let proxy: EgressProxy;
  let origin: http.Server;
  let base = '';
  const seen: http.IncomingHttpHeaders[] = [];
  /** Bytes the origin had written of /long when its client went. */
  let longWritten = -1;

  before(async () => {
    origin = http.createServer((req, res) => {
      seen.push(req.headers);
      if (req.url === '/long') {
        // 256 MB of a repeated piece, written as the proxy takes it
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 256 * 2 ** 20 });
        let written = 0;
        res.on('close', () => (longWritten = written));
        const next = () => {
          if (written >= 256 * 2 ** 20) return void res.end();
          written += 2 ** 20;
          if (res.write(BODY.subarray(0, 2 ** 20))) setImmediate(next);
          else res.once('drain', next);
        };
        return next();
      }
      if (req.url === '/chunked') {
        res.writeHead(200, { 'content-type': 'video/mp4', 'keep-alive': 'timeout=5' });
        let at = 0;
        const next = () => {
          if (at >= BODY.length) return void res.end();
          const piece = BODY.subarray(at, (at += 300_000));
          if (res.write(piece)) setImmediate(next);
          else res.once('drain', next);
        };
        return next();
      }
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': BODY.length, 'keep-alive': 'timeout=5' });
      res.end(req.method === 'HEAD' ? undefined : BODY);
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(origin.address() as net.AddressInfo).port}`;
    proxy = await startEgressProxy({ allowPrivate: true });
  });

  after(async () => {
    await proxy.close();
    origin.closeAllConnections();
    await new Promise((r) => origin.close(r));
  });

  it('a body with a length arrives whole, the head says the connection closes and drops the origin\'s keep-alive', async () => {
    const got = await fetchThrough(proxy, `${base}/plain`);
    assert.match(got.head, /^HTTP\/1\.1 200 OK\r\n/, got.head);
    assert.match(got.head, /\r\nConnection: close$/i, got.head);
    assert.doesNotMatch(got.head, /keep-alive/i, got.head);
    assert.equal(got.body.length, BODY.length);
    assert.ok(got.body.equals(BODY), 'the relayed body differs from the origin\'s');
  });

  it('a chunked body arrives whole and still chunked, to a tool that reads 10 KB every 2 ms (reading pauses and resumes)', async () => {
    const got = await fetchThrough(proxy, `${base}/chunked`, { readBytes: 10_000, delayMs: 2 });
    assert.match(got.head, /\r\nTransfer-Encoding: chunked\r\n/i, got.head);
    assert.ok(dechunk(got.body).equals(BODY), 'the de-chunked body differs from the origin\'s');
  });

  it('HEAD: the head alone; the origin never sees the proxy credentials and is asked for one request', async () => {
    const got = await fetchThrough(proxy, `${base}/plain`, { method: 'HEAD' });
    assert.match(got.head, new RegExp(`content-length: ${BODY.length}`, 'i'), got.head);
    assert.equal(got.body.length, 0);
    assert.ok(seen.length >= 1);
    for (const h of seen) {
      assert.equal(h['proxy-authorization'], undefined);
      assert.equal(h.connection, 'close');
    }
  });

  it('a tool that hangs up after 1 MB of 256 MB ends the fetch from the origin', async () => {
    await fetchThrough(proxy, `${base}/long`, { readBytes: 64 * 1024, delayMs: 5, stopAfter: 1_000_000 });
    for (let i = 0; i < 200 && longWritten < 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(longWritten >= 0, 'the origin\'s response was still open 10 s after the tool had gone');
    // what socket buffers hold on loopback (a few MB) passed; not the rest of the body
    assert.ok(longWritten < 64 * 2 ** 20, `the origin wrote ${longWritten} bytes for a tool that read 1 MB`);
  });

  it('a body with neither a length nor chunks, ended by the origin closing (as old servers send), arrives whole', async () => {
    const raw = net.createServer((s) => {
      s.once('data', () => {
        s.write('HTTP/1.0 200 OK\r\nContent-Type: video/mp4\r\n\r\n');
        s.end(BODY);
      });
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', () => r()));
    try {
      const got = await fetchThrough(proxy, `http://127.0.0.1:${(raw.address() as net.AddressInfo).port}/old`, { readBytes: 32 * 1024, delayMs: 1 });
      assert.match(got.head, /^HTTP\/1\.0 200 OK\r\n/, got.head);
      assert.match(got.head, /\r\nConnection: close$/i, got.head);
      assert.ok(got.body.equals(BODY), `the relayed body differs from the origin's (${got.body.length} of ${BODY.length} bytes)`);
    } finally {
      raw.close();
    }
  });

  it('a CONNECT tunnel carries 6 MB each way unchanged', async () => {
    const echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    try {
      const proxyUrl = new URL(proxy.urlFor('relay-test'));
      const auth = Buffer.from(`${proxyUrl.username}:${proxyUrl.password}`).toString('base64');
      const socket = net.connect(Number(proxyUrl.port), '127.0.0.1');
      const echoed = await new Promise<Buffer>((resolve, reject) => {
        let got = Buffer.alloc(0);
        let open = false;
        socket.write(`CONNECT 127.0.0.1:${(echo.address() as net.AddressInfo).port} HTTP/1.1\r\nProxy-Authorization: Basic ${auth}\r\n\r\n`);
        socket.on('data', (c: Buffer) => {
          got = Buffer.concat([got, c]);
          if (!open) {
            const end = got.indexOf('\r\n\r\n');
            if (end < 0) return;
            assert.match(got.subarray(0, end).toString(), /^HTTP\/1\.1 200/);
            open = true;
            got = got.subarray(end + 4);
            socket.write(BODY);
          }
          if (got.length >= BODY.length) resolve(got);
        });
        socket.on('error', reject);
      });
      socket.destroy();
      assert.ok(echoed.equals(BODY), 'the tunnel changed the bytes');
    } finally {
      echo.close();
    }
  });
});
