// A third-party client's findings against the contract, each as the request it sent, against the real app
// on both databases (the workflow side is a boundary these tests are not about).
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { freshRateWindow, startApiHarness, type ApiHarness } from './helpers/api-harness';

const SOURCE = 'http://127.0.0.1:9/video.mp4';

/** A raw HTTP/1.1 exchange, for requests fetch() will not send (TRACE, a 20 KB request line). */
function rawRequest(baseUrl: string, method: string, p: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(baseUrl + p, { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

for (const dialect of ['sqlite', 'postgresql'] as const) {
  describe(`contract findings on ${dialect}`, function () {
    let h: ApiHarness;
    let key: string;
    let accountId: string;

    before(async () => {
      h = await startApiHarness(dialect);
      ({ key, accountId } = await h.newAccount('enterprise', 1_000));
    });
    after(() => h.close());

    it('1. unknown or misspelled body fields are a 422 naming each field, and nothing is charged', async () => {
      const started = h.orchestrator.started.length;
      for (const [p, body, field] of [
        ['/v1/comments', { url: SOURCE, max_coments: 5 }, 'max_coments'],
        ['/v1/transcribe', { url: SOURCE, outputformat: 'srt' }, 'outputformat'],
        ['/v1/preview', { url: SOURCE, preview_type: 'gif', colums: 3 }, 'colums'],
      ] as const) {
        const res = await h.request('POST', p, { key, body });
        assert.equal(res.status, 422, `${p} ${res.text}`);
        assert.match(res.body.detail, new RegExp(`^${field}: is not a parameter of this call`));
        assert.deepEqual(res.body.errors, [{ field, message: 'is not a parameter of this call' }]);
      }
      // a "__proto__" key anywhere in the body (refused by the JSON reader) is named the same way, not called invalid JSON
      const proto = await fetch(`${h.baseUrl}/v1/preview`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"url": "' + SOURCE + '", "timestamp": [{"__proto__": [1]}]}' });
      const protoBody = (await proto.json()) as { detail: string; errors: unknown };
      assert.equal(proto.status, 422, JSON.stringify(protoBody));
      assert.deepEqual(protoBody.errors, [{ field: '__proto__', message: 'is not a parameter of this call' }]);
      assert.equal(await h.balance(accountId), 1_000);
      assert.equal(h.orchestrator.started.length, started);
    });

    it('2a. a compressed body that does not decompress is a 400 with a detail (gzip, deflate, br), never a 5xx', async () => {
      for (const enc of ['gzip', 'deflate', 'br']) {
        const res = await fetch(`${h.baseUrl}/v1/download`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': enc }, body: 'this is not compressed' });
        const body = (await res.json()) as { detail: string };
        assert.equal(res.status, 400, enc);
        assert.match(body.detail, new RegExp(`Content-Encoding ${enc}`, 'i'), enc);
      }
      // a well-formed compressed body is accepted
      const ok = await fetch(`${h.baseUrl}/v1/download`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: zlib.gzipSync(JSON.stringify({ url: SOURCE })) });
      assert.equal(ok.status, 202);
      assert.equal(await h.balance(accountId), 999);
    });

    it('2b. a NUL byte (or any control character) in a URL is a 422, bound as a value everywhere it is used', async () => {
      for (const url of [`${SOURCE}\u0000`, 'http://exa\u0000mple.com/v.mp4', `${SOURCE}?q=\u0001`, `https://${'a'.repeat(64)}.example/v.mp4`, `https://${'abc.'.repeat(70)}example/v.mp4`]) {
        const res = await h.request('POST', '/v1/download', { key, body: { url } });
        assert.equal(res.status, 422, JSON.stringify(url));
        assert.match(res.body.detail, /^url: /);
      }
      // a NUL in a filter value reaches the query as a bound parameter: an empty page, not a 5xx
      const list = await h.request('GET', `/v1/jobs?status=${encodeURIComponent('completed\u0000')}`, { key });
      assert.ok(list.status === 200 || list.status === 422, list.text);
    });

    it('2c. a cursor the server did not issue is a 422 on the job list and the delivery list (time ±1e20, 1e400, NUL in id)', async () => {
      const hook = await h.request('POST', '/v1/webhooks', { key, body: { url: 'http://127.0.0.1:9/hook', events: [] } });
      assert.equal(hook.status, 201);
      const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const cursors = ['eyJ0IjoxZTQwMCwiaWQiOiJ4In0', b64({ t: 1e20, id: 'x' }), b64({ t: -1e20, id: 'x' }), b64({ t: 8.64e15 + 1, id: 'x' }), b64({ t: Date.now(), id: 'x\u0000y' }), 'not-base64!', ''.padEnd(40, 'A')];
      for (const cursor of cursors) {
        for (const p of ['/v1/jobs', `/v1/webhooks/${hook.body.id}/deliveries`]) {
          const res = await h.request('GET', `${p}?cursor=${encodeURIComponent(cursor)}`, { key });
          assert.equal(res.status, 422, `${p} ${cursor}: ${res.text}`);
          assert.equal(res.body.detail, 'cursor is not valid: pass next_cursor from a previous response unchanged');
        }
      }
      // a cursor the server issued still pages
      for (let i = 0; i < 3; i++) assert.equal((await h.request('POST', '/v1/fingerprint', { key, body: { url: SOURCE } })).status, 202);
      const first = await h.request('GET', '/v1/jobs?limit=2', { key });
      assert.equal(first.body.has_more, true);
      const second = await h.request('GET', `/v1/jobs?limit=2&cursor=${first.body.next_cursor}`, { key });
      assert.equal(second.status, 200);
      assert.ok(second.body.items.length >= 1);
    });

    it('4. /healthz and the OpenAPI document are never rate-limited; result files are limited per link, not per IP', async () => {
      await freshRateWindow();
      const ip = { 'x-forwarded-for': '198.51.100.7' };
      for (let i = 0; i < 30; i++) {
        assert.equal((await h.request('GET', '/healthz', { headers: ip })).status, 200);
        const doc = await h.request('GET', '/v1/openapi.json', { headers: ip });
        assert.equal(doc.status, 200);
        assert.equal(doc.headers.get('x-ratelimit-limit'), null);
      }
      // the free plan's per-IP limit (10/min) still applies to unauthenticated API calls
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await h.request('GET', '/v1/jobs', { headers: ip })).status);
      assert.deepEqual([...new Set(statuses.slice(0, 10))], [401]);
      assert.equal(statuses[11], 429);
      // result files: limited per link (60/min), not per IP — the limited IP fetches a link 60 times, the 61st is a 429
      const link = h.links.url('00000000-0000-4000-8000-000000000000', new Date(Date.now() + 60_000));
      const fileStatuses: number[] = [];
      for (let i = 0; i < 61; i++) fileStatuses.push((await fetch(link, { headers: ip })).status);
      assert.deepEqual([...new Set(fileStatuses.slice(0, 60))], [404], 'no job behind this link: 404, never the per-IP 429');
      assert.equal(fileStatuses[60], 429);
    });

    it('5. the OpenAPI document matches the server: times, bounds, integers, uri, operationIds, headers, no bare nullable', async () => {
      const doc = (await h.request('GET', '/v1/openapi.json')).body;
      assert.match(doc.openapi, /^3\.1\./);
      const text = JSON.stringify(doc);
      assert.doesNotMatch(text, /"nullable":/, '3.1 spells nullability as a type list');
      const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, m]) => Object.entries(m).map(([verb, op]) => ({ p, verb, op })));
      for (const { p, verb, op } of ops) assert.ok(op.operationId, `${verb} ${p} has an operationId`);
      assert.equal(new Set(ops.map((o) => o.op.operationId)).size, ops.length);
      assert.ok(doc.paths['/healthz']?.get, '/healthz documented');
      const schemaOf = (p: string) => {
        const ref = doc.paths[p].post.requestBody.content['application/json'].schema;
        return ref.$ref ? doc.components.schemas[ref.$ref.split('/').pop()] : ref;
      };
      const download = schemaOf('/v1/download');
      assert.equal(download.properties.url.format, 'uri');
      const clipStart = JSON.stringify(download.properties.clip_start);
      assert.match(clipStart, /"type":"number"/);
      assert.match(clipStart, /"type":"string"/);
      assert.equal(schemaOf('/v1/fingerprint').properties.hash_size.type, 'integer');
      const variants = doc.components.schemas as Record<string, { properties: Record<string, { maximum?: number; exclusiveMinimum?: number; minimum?: number }> }>;
      assert.equal(variants.GifPreviewRequest!.properties.duration!.maximum, 15);
      assert.equal(variants.GifPreviewRequest!.properties.fps!.maximum, 20);
      assert.equal(variants.ClipPreviewRequest!.properties.duration!.maximum, 30);
      assert.deepEqual([variants.MosaicPreviewRequest!.properties.columns!.minimum, variants.MosaicPreviewRequest!.properties.columns!.maximum], [1, 8]);
      assert.deepEqual([variants.ThumbnailPreviewRequest!.properties.width!.minimum, variants.ThumbnailPreviewRequest!.properties.width!.maximum], [16, 1920]);
      const created = doc.paths['/v1/download'].post.responses['202'];
      assert.ok(created.headers.Location, 'Location documented');
      assert.ok(created.headers['X-RateLimit-Limit'] && created.headers['X-RateLimit-Remaining'] && created.headers['X-RateLimit-Reset'], 'X-RateLimit-* documented');
      // null is accepted exactly where the document allows it (a type list with "null")
      const allowsNull = (schema: unknown) => JSON.stringify(schema).includes('"type":"null"');
      assert.ok(allowsNull(variants.ThumbnailPreviewRequest!.properties.timestamp));
      assert.equal((await h.request('POST', '/v1/preview', { key, body: { url: SOURCE, preview_type: 'thumbnail', timestamp: null } })).status, 202);
      assert.ok(!allowsNull(schemaOf('/v1/fingerprint').properties.hash_size));
      const nullHash = await h.request('POST', '/v1/fingerprint', { key, body: { url: SOURCE, hash_size: null } });
      assert.equal(nullHash.status, 422, nullHash.text);
      assert.match(nullHash.body.detail, /^hash_size: /);
    });

    it('6. numbers that are not finite are a 422; a 40 KB query string is a JSON 431, a url at its limit in 3-byte characters is not', async () => {
      for (const raw of [`{"url":"${SOURCE}","clip_start":${'9'.repeat(400)}}`, `{"url":"${SOURCE}","clip_end":1e999}`]) {
        const res = await h.request('POST', '/v1/download', { key, rawBody: raw, headers: { 'content-type': 'application/json' } });
        assert.equal(res.status, 422, raw.slice(0, 60));
        assert.match(res.body.detail, /^clip_(start|end): /);
      }
      const huge = await rawRequest(h.baseUrl, 'GET', `/v1/jobs?x=${'a'.repeat(40_000)}`, { authorization: `Bearer ${key}` });
      assert.equal(huge.status, 431);
      assert.match(String(huge.headers['content-type']), /application\/json/);
      assert.match((JSON.parse(huge.body) as { detail: string }).detail, /too large/);
      // a url at its limit (2,048 UTF-16 units) of 3-byte characters, 9 bytes each percent-encoded:
      // 18 KB of request line; refused for its scheme, not its size
      const longest = await rawRequest(h.baseUrl, 'GET', `/v1/info?url=${encodeURIComponent('ftp://e.example/' + '\u4e2d'.repeat(2032))}`, { authorization: `Bearer ${key}` });
      assert.notEqual(longest.status, 431, longest.body);
      assert.equal(longest.status, 422, longest.body);
    });

    it('7. null, a string or a number as the body is "not a JSON object"; TRACE is a 405 with Allow', async () => {
      for (const raw of ['null', '"x"', '42', '[1]', 'true']) {
        const res = await h.request('POST', '/v1/download', { key, rawBody: raw, headers: { 'content-type': 'application/json' } });
        assert.equal(res.status, 400, raw);
        assert.equal(res.body.detail, 'The request body is valid JSON but not a JSON object; send an object such as {"url": "…"}');
      }
      const bad = await h.request('POST', '/v1/download', { key, rawBody: '{"url": ', headers: { 'content-type': 'application/json' } });
      assert.equal(bad.status, 400);
      assert.match(bad.body.detail, /not valid JSON/);
      for (const [p, allow] of [['/v1/download', 'POST'], ['/v1/jobs', 'GET']] as const) {
        const res = await rawRequest(h.baseUrl, 'TRACE', p, { authorization: `Bearer ${key}` });
        assert.equal(res.status, 405, p);
        assert.ok(String(res.headers.allow).split(', ').includes(allow), `${p}: Allow ${res.headers.allow}`);
        assert.match((JSON.parse(res.body) as { detail: string }).detail, new RegExp(`TRACE is not allowed on ${p}`));
      }
    });

    it('10. GET /v1/account: plan, rate limit, balance, monthly allowance, next top-up, usage by job type; free', async () => {
      const a = await h.newAccount('pro', 50);
      assert.equal((await h.request('POST', '/v1/transcribe', { key: a.key, body: { url: SOURCE } })).status, 202);
      assert.equal((await h.request('POST', '/v1/fingerprint', { key: a.key, body: { url: SOURCE } })).status, 202);
      const res = await h.request('GET', '/v1/account', { key: a.key });
      assert.equal(res.status, 200);
      const b = res.body;
      assert.equal(b.plan, 'pro');
      assert.equal(b.rate_limit_per_minute, 200);
      assert.equal(b.monthly_credits, 2_000);
      assert.equal(b.balance, await h.balance(a.accountId));
      const next = new Date(b.next_topup_at);
      assert.equal(next.getUTCDate(), 1);
      assert.ok(next.getTime() > Date.now());
      assert.ok(b.usage_this_month.transcribe > 0 && b.usage_this_month.fingerprint > 0, JSON.stringify(b.usage_this_month));
      assert.equal((await h.request('GET', '/v1/account', { key: a.key })).body.balance, b.balance, 'reading the account is free');
    });
  });
}
