import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import { OPERATIONS } from '../operations/registry';
import { ERROR_META_KEY } from '../api/mcp/protocol-error';
import { startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { PT_VIDEOS, startPeerTubeFixture, type PeerTubeFixture } from './helpers/peertube-fixture';
import { CLI, cli, waitFor } from './helpers/processes';
import { startServeStack, type ServeStack } from './helpers/serve-stack';
import { EXPECTED, serveSpeechFiles, type SpeechFiles } from './helpers/speech-fixtures';
import { parseVttStrict, wordErrorRate } from './helpers/subtitles';

// The JSON Schema 2020-12 validator the SDK itself depends on (ajv 8 with ajv-formats).
interface Ajv {
  compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
}
const sdkRequire = createRequire(require.resolve('@modelcontextprotocol/sdk/server/index.js'));
const Ajv2020 = (sdkRequire('ajv/dist/2020') as { default: new (opts: object) => Ajv }).default;
const addFormats = (sdkRequire('ajv-formats') as { default: (ajv: Ajv) => void }).default;

const CREATE_TOOLS = Object.values(OPERATIONS).map((op) => op.mcp.tool);
const COLLECTION_TOOLS = ['start_batch', 'get_batch', 'list_batches', 'cancel_batch', 'create_subscription', 'list_subscriptions', 'get_subscription', 'update_subscription', 'check_subscription', 'delete_subscription'];
const TOOL_NAMES = ['get_video_info', ...CREATE_TOOLS, 'get_job', 'list_jobs', 'cancel_job', 'get_account', ...COLLECTION_TOOLS];

type ToolResult = CallToolResult & { structuredContent?: any };

/** An SDK client on Streamable HTTP; `onResponse` sees every HTTP response the transport gets. */
async function connectHttp(base: string, key: string, onResponse?: (res: Response, method: string) => void): Promise<Client> {
  const client = new Client({ name: 'mcp-e2e-http', version: '1.0.0' });
  const observed = async (url: string | URL, init?: RequestInit) => {
    const res = await fetch(url, init);
    onResponse?.(res, init?.method ?? 'GET');
    return res;
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } }, fetch: observed }));
  return client;
}

/** An SDK client on stdio, spawning `bin/mediasvc mcp` against the running API. */
async function connectStdio(base: string, key: string): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: CLI, args: ['mcp'], env: { MEDIASVC_URL: base, MEDIASVC_API_KEY: key }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'mcp-e2e-stdio', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (err) {
    await waitFor('the bridge to report why', async () => (stderr.includes('mediasvc:') ? true : undefined), 20_000, 100).catch(() => undefined);
    throw Object.assign(err as Error, { stderr });
  }
  return { client, stderr: () => stderr };
}

function call(client: Client, name: string, args: Record<string, unknown>, opts: RequestOptions = {}): Promise<ToolResult> {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 300_000, ...opts }) as Promise<ToolResult>;
}

const textsOf = (r: ToolResult): string[] => r.content.flatMap((c) => (c.type === 'text' ? [c.text] : []));
/** REST's error body on an error result (in _meta: structuredContent is for results matching the outputSchema). */
const errorOf = (r: ToolResult): any => {
  assert.equal(r.structuredContent, undefined, 'an error result carries no structuredContent, which clients check against the outputSchema');
  return r._meta?.[ERROR_META_KEY];
};

/** Progress notifications must rise strictly, out of 100, the first while the job still ran and the last at 100. */
function assertProgress(progress: Progress[]): void {
  assert.ok(progress.length >= 2, `progress: ${JSON.stringify(progress)}`);
  assert.ok(progress[0]!.progress < 100);
  progress.forEach((p, i) => {
    assert.equal(p.total, 100);
    if (i > 0) assert.ok(p.progress > progress[i - 1]!.progress, `not rising: ${JSON.stringify(progress)}`);
  });
  assert.equal(progress.at(-1)!.progress, 100);
}

/** An account with a key, made with the operator CLI; returns the key and its id. */
async function newAccount(s: ServeStack, name: string, plan: string): Promise<{ accountId: string; key: string; keyId: string }> {
  const accountId = (await cli(s.env, 'accounts', 'create', '--name', name, '--plan', plan)).pop()!;
  const lines = await cli(s.env, 'keys', 'create', '--account', accountId, '--name', `${name} key`);
  return { accountId, key: lines.at(-1)!, keyId: /created key (\S+)/.exec(lines[0]!)![1]! };
}

/** Waits for a fresh rate-limit minute unless at least `needS` seconds are left in this one (the window is per calendar minute). */
async function roomInRateWindow(needS: number): Promise<void> {
  const left = 60 - ((Date.now() / 1000) % 60);
  if (left < needS) await new Promise((r) => setTimeout(r, left * 1000 + 500));
}

describe('MCP end to end: Streamable HTTP at /mcp and stdio (bin/mediasvc mcp) against serve', function () {
  let fx: FixturePlatform;
  let pt: PeerTubeFixture;
  let speech: SpeechFiles;
  let s: ServeStack;
  let http: Client;
  let stdio: Client;
  const credits = () => s.credits();
  /** The transcription of the HTTP tests, read again by the job tools. */
  let transcribeJobId = '';

  before(async function () {
    fx = await startFixturePlatform();
    pt = await startPeerTubeFixture();
    speech = await serveSpeechFiles();
    s = await startServeStack({ name: 'mcp-e2e', plan: 'pro', env: { WHISPER_AUTO_DOWNLOAD: '', WHISPER_MODEL_DIRS: '', HF_HUB_OFFLINE: '1' } });
    http = await connectHttp(s.base, s.key);
    stdio = (await connectStdio(s.base, s.key)).client;
  });

  after(async () => {
    await http?.close();
    await stdio?.close();
    await s?.stop();
    await Promise.all([fx?.close(), pt?.close(), speech?.close()]);
  });

  describe('tools', () => {
    it('lists the tools (one per operation in the registry, and the reads), with input and output schemas that compile as JSON Schema 2020-12, every argument described, credit costs and annotations; stdio lists the same', async () => {
      const { tools } = await http.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
      const ajv = new Ajv2020({ strict: true, allErrors: true });
      addFormats(ajv);
      const validators = new Map(tools.map((t) => [t.name, ajv.compile(t.inputSchema)]));
      const byName = new Map(tools.map((t) => [t.name, t]));
      for (const op of Object.values(OPERATIONS)) {
        const tool = byName.get(op.mcp.tool)!;
        assert.ok(tool.description!.includes(`Costs ${op.costText}`), tool.description);
        assert.deepEqual(Object.entries(tool.inputSchema.properties!.wait_seconds as object).filter(([k]) => k !== 'description'), [
          ['default', 60],
          ['type', 'integer'],
          ['minimum', 0],
          ['maximum', 300],
        ]);
        // the source: a URL, or a file sent to POST /v1/uploads (comments need the platform page)
        if (op.jobType === 'comments') assert.ok(tool.inputSchema.required!.includes('url'));
        else assert.deepEqual([(tool.inputSchema.properties!.url as { format?: string }).format, (tool.inputSchema.properties!.upload_id as { pattern?: string }).pattern], ['uri', '^upl_[A-Za-z0-9]{24}$']);
      }
      assert.match(byName.get('get_video_info')!.description!, /Costs 1 credit/);
      for (const name of ['get_video_info', ...CREATE_TOOLS]) assert.equal(byName.get(name)!.annotations?.openWorldHint, true, name);
      for (const name of ['get_job', 'list_jobs', 'get_account']) {
        assert.equal(byName.get(name)!.annotations?.readOnlyHint, true, name);
        assert.equal(byName.get(name)!.annotations?.openWorldHint, false, name);
        assert.match(byName.get(name)!.description!, /Free\./);
      }
      // reading a URL's metadata changes nothing, though it costs a credit
      assert.equal(byName.get('get_video_info')!.annotations?.readOnlyHint, true);
      for (const name of CREATE_TOOLS) assert.equal(byName.get(name)!.annotations?.readOnlyHint, false, name);
      // every argument is described for the model, and every tool says what its structuredContent holds
      for (const tool of tools) {
        const undescribed = Object.entries(tool.inputSchema.properties ?? {}).filter(([, v]) => typeof (v as { description?: unknown }).description !== 'string').map(([k]) => k);
        assert.deepEqual(undescribed, [], `${tool.name}: arguments without a description`);
        assert.equal(tool.outputSchema?.type, 'object', `${tool.name} has an outputSchema`);
        ajv.compile(tool.outputSchema!);
      }
      assert.ok(byName.get('get_account')!.outputSchema!.properties!.queued_jobs, 'get_account describes the account as REST does');
      assert.ok(byName.get('download_media')!.outputSchema!.properties!.result_data, 'a create tool describes the Job it returns');
      // the compiled schemas hold what the registry holds: a preview type's fields, wait_seconds, no unknown fields
      const preview = validators.get('create_preview')!;
      assert.equal(preview({ url: 'https://example.com/v', preview_type: 'mosaic', columns: 3, wait_seconds: 0 }), true);
      assert.equal(preview({ url: 'https://example.com/v', preview_type: 'mosaic', bogus: 1 }), false);
      assert.equal(preview({ url: 'https://example.com/v', preview_type: 'poster' }), false);
      assert.equal(validators.get('fingerprint')!({ url: 'https://example.com/v', hash_size: 12 }), false);
      assert.equal(validators.get('transcribe')!({ upload_id: 'upl_short', language: 'en' }), false);
      assert.equal(validators.get('download_media')!({ url: 'https://example.com/v', wait_seconds: 301 }), false);

      assert.deepEqual((await stdio.listTools()).tools, tools);
    });

    it('offers every operation of the registry as a create tool (registry completeness)', async () => {
      const { tools } = await http.listTools();
      const waiting = tools.filter((t: Tool) => t.inputSchema.properties?.wait_seconds).map((t) => t.name);
      assert.deepEqual(waiting.sort(), [...CREATE_TOOLS].sort());
      for (const op of Object.values(OPERATIONS)) {
        const tool = tools.find((t) => t.name === op.mcp.tool);
        assert.ok(tool, `operation ${op.jobType} has no MCP tool ${op.mcp.tool}`);
        assert.equal(tool.title, op.mcp.title);
        assert.ok(tool.description!.startsWith(op.summary));
      }
    });
  });

  describe('batches and subscriptions', () => {
    it('starts a batch, reads it to its end and lists it; creates, pauses and deletes a subscription: the same services as REST', async () => {
      const urls = [fx.url('/a.mp4'), fx.url('/b.mp4'), fx.url('/c.mp4')];
      const started = await call(http, 'start_batch', { operation: 'list', source: { urls } });
      assert.ok(!started.isError, JSON.stringify(started.content));
      const batchId = started.structuredContent.batch_id;
      const batch = await waitFor('the batch', async () => {
        const r = await call(http, 'get_batch', { batch_id: batchId, limit: 2 });
        return r.structuredContent.status === 'completed' ? r.structuredContent : undefined;
      }, 60_000, 500);
      assert.deepEqual(batch.counts, { total: 3, pending: 0, processing: 0, completed: 3, failed: 0, skipped: 0 });
      assert.deepEqual(batch.items.map((i: any) => i.url), urls.slice(0, 2));
      assert.equal(batch.has_more, true);
      assert.ok((await call(http, 'list_batches', {})).structuredContent.items.some((b: any) => b.batch_id === batchId));
      const bad = await call(http, 'start_batch', { operation: 'list', source: { urls: [] } });
      assert.equal(bad.isError, true);
      assert.match(errorOf(bad).detail, /at least one URL/);

      const sub = await call(http, 'create_subscription', { url: fx.url('/feed.xml'), operation: 'waveform', check_every: 3600 });
      assert.ok(!sub.isError, JSON.stringify(sub.content));
      const id = sub.structuredContent.subscription_id;
      const paused = await call(http, 'update_subscription', { subscription_id: id, paused: true });
      assert.equal(paused.structuredContent.paused, true);
      assert.equal((await call(http, 'check_subscription', { subscription_id: id })).isError, true, 'a paused subscription is not checked');
      assert.ok((await call(http, 'list_subscriptions', {})).structuredContent.items.some((x: any) => x.subscription_id === id && x.paused));
      assert.equal((await call(http, 'delete_subscription', { subscription_id: id })).structuredContent.deleted, id);
      assert.equal((await call(http, 'get_subscription', { subscription_id: id })).isError, true);
    });
  });

  describe('auth', () => {
    it('refuses a missing or wrong key with 401 before any MCP message, and a deactivated key with 403', async () => {
      const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
      const raw = await fetch(`${s.base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initialize) });
      assert.equal(raw.status, 401);
      assert.equal(raw.headers.get('www-authenticate'), 'Bearer');
      assert.ok(raw.headers.get('x-ratelimit-limit'));
      assert.deepEqual(await raw.json(), { detail: 'Missing API key: send the header Authorization: Bearer vc_…' });

      await assert.rejects(connectHttp(s.base, 'vc_not_a_key'), (err: Error & { code?: number }) => err.code === 401 && /Invalid API key/.test(err.message));

      const other = await newAccount(s, 'mcp-deactivated', 'starter');
      await cli(s.env, 'keys', 'deactivate', other.keyId);
      await assert.rejects(connectHttp(s.base, other.key), (err: Error & { code?: number }) => err.code === 403 && /deactivated/.test(err.message));
    });

    it('over stdio, the bridge exits with the API\'s refusal when the key is wrong', async () => {
      await assert.rejects(connectStdio(s.base, 'vc_not_a_key'), (err: Error & { stderr?: string }) => {
        assert.match(err.stderr ?? '', /mediasvc: could not connect to http:\/\/127\.0\.0\.1:\d+\/mcp: Invalid API key/);
        return true;
      });
    });
  });

  describe('over Streamable HTTP', () => {
    it('get_video_info answers with the video info for 1 credit, like GET /v1/info; an unsupported page is an error result and free', async () => {
      const url = fx.url('/watch/trailer');
      const before = await credits();
      const r = await call(http, 'get_video_info', { url });
      assert.ok(!r.isError, textsOf(r)[0]);
      assert.equal(r.structuredContent.title, 'Fixture Trailer');
      assert.equal(r.structuredContent.duration, 4);
      assert.deepEqual(JSON.parse(textsOf(r)[0]!), r.structuredContent);
      const rest = await s.api('GET', `/v1/info?url=${encodeURIComponent(url)}`);
      assert.deepEqual(r.structuredContent, rest.body);
      assert.equal(await credits(), before - 2);

      // neither url nor upload_id: refused by the same validation as REST, nothing charged
      const noSource = await call(http, 'transcribe', { language: 'en', wait_seconds: 0 });
      assert.equal(noSource.isError, true);
      assert.match(textsOf(noSource)[0]!, /url: is required \(or upload_id/);
      assert.equal(await credits(), before - 2);

      const bad = await call(http, 'get_video_info', { url: fx.url('/watch/nomedia') });
      const restBad = await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/watch/nomedia'))}`);
      assert.equal(bad.isError, true);
      assert.equal(textsOf(bad)[0], restBad.body.detail);
      assert.equal(errorOf(bad).status, restBad.status);
      assert.equal(await credits(), before - 2);
    });

    it('download_media waits for its job and returns result_data and download_url; wait_seconds 0 returns the pending job; charges as REST does', async () => {
      const before = await credits();
      const r = await call(http, 'download_media', { url: fx.url('/media/v480.mp4'), format: 'mp4' });
      assert.ok(!r.isError, textsOf(r)[0]);
      const job = r.structuredContent;
      assert.equal(job.status, 'completed');
      assert.equal(job.credits_charged, 1);
      assert.equal(job.result_data.format, 'mp4');
      assert.ok(Math.abs(job.result_data.duration - 4) < 0.2);
      assert.ok(r.content.every((c) => c.type === 'text'), 'a video is not inlined');
      const file = await fetch(job.download_url);
      assert.equal(file.status, 200);
      assert.equal(file.headers.get('content-type'), 'video/mp4');
      assert.equal((await file.arrayBuffer()).byteLength, job.result_data.filesize);
      assert.equal(await credits(), before - 1);

      // with processing, 2 credits, over MCP as over REST; not waiting gives the job_id and status at once
      const body = { url: fx.url('/media/audio.m4a'), format: 'wav', processing: ['normalize'] };
      const quick = await call(http, 'download_media', { ...body, wait_seconds: 0 });
      assert.ok(!quick.isError);
      assert.ok(['pending', 'processing'].includes(quick.structuredContent.status));
      assert.match(textsOf(quick)[0]!, new RegExp(`call get_job with job_id "${quick.structuredContent.job_id}"`));
      const rest = await s.api('POST', '/v1/download', body);
      assert.equal(rest.status, 202);
      assert.equal(quick.structuredContent.credits_charged, rest.body.credits_charged);
      assert.equal(rest.body.credits_charged, 2);
      assert.equal(await credits(), before - 1 - 2 - 2);
      for (const id of [quick.structuredContent.job_id, rest.body.job_id]) assert.equal((await s.waitJob(id)).status, 'completed');
    });

    it('create_preview returns a thumbnail and a mosaic as image content', async () => {
      const before = await credits();
      for (const args of [{ preview_type: 'thumbnail', width: 320 }, { preview_type: 'mosaic', columns: 2, rows: 2 }]) {
        const r = await call(http, 'create_preview', { url: fx.url('/watch/trailer'), ...args });
        assert.ok(!r.isError, textsOf(r)[0]);
        const job = r.structuredContent;
        assert.equal(job.result_data.preview_type, args.preview_type);
        const image = r.content.find((c) => c.type === 'image');
        assert.ok(image && image.type === 'image');
        assert.equal(image.mimeType, 'image/jpeg');
        const bytes = Buffer.from(image.data, 'base64');
        assert.deepEqual([...bytes.subarray(0, 3)], [0xff, 0xd8, 0xff]);
        assert.ok(bytes.equals(Buffer.from(await (await fetch(job.download_url)).arrayBuffer())));
      }
      assert.equal(await credits(), before - 2);
    });

    it('fingerprint returns the hashes as result_data and its JSON file inline', async () => {
      const before = await credits();
      const r = await call(http, 'fingerprint', { url: fx.url('/media/v720.mp4'), hash_size: 8 });
      assert.ok(!r.isError, textsOf(r)[0]);
      const rd = r.structuredContent.result_data;
      assert.match(rd.perceptual_hash, /^[0-9a-f]{16}$/);
      const inline = JSON.parse(textsOf(r)[1]!);
      assert.equal(inline.perceptual_hash, rd.perceptual_hash);
      assert.equal(inline.average_hash, rd.average_hash);
      assert.equal(await credits(), before - 1);
    });

    it('transcribe sends progress notifications while Whisper runs, then returns the transcript inline and as a resource', async () => {
      const before = await credits();
      const progress: Progress[] = [];
      const r = await call(http, 'transcribe', { url: speech.url('jfk.wav') }, { onprogress: (p) => progress.push(p) });
      assert.ok(!r.isError, textsOf(r)[0]);
      const job = r.structuredContent;
      assert.equal(job.status, 'completed');
      assertProgress(progress);
      const transcript = JSON.parse(textsOf(r)[1]!);
      assert.equal(transcript.language, 'en');
      assert.ok(wordErrorRate(EXPECTED['jfk.wav']!.text!, transcript.text) <= 0.1, transcript.text);
      assert.deepEqual(r.content.find((c) => c.type === 'resource_link'), {
        type: 'resource_link',
        uri: `job://${job.job_id}/output`,
        name: `output of job ${job.job_id}`,
        mimeType: 'application/json',
        size: Buffer.byteLength(textsOf(r)[1]!),
      });

      const output = await http.readResource({ uri: `job://${job.job_id}/output` });
      assert.equal((output.contents[0] as { text: string }).text, await (await fetch(job.download_url)).text());
      const asResource = await http.readResource({ uri: `job://${job.job_id}` });
      assert.deepEqual(JSON.parse((asResource.contents[0] as { text: string }).text), (await s.api('GET', `/v1/jobs/${job.job_id}`)).body);
      assert.equal(await credits(), before - 4);
      transcribeJobId = job.job_id;
    });

    it('translate returns the translated subtitles inline', async () => {
      const before = await credits();
      const r = await call(http, 'translate', { url: speech.url('jfk.wav'), target_language: 'es', source_language: 'en', output_format: 'vtt', model_size: 'tiny' });
      assert.ok(!r.isError, textsOf(r)[0]);
      assert.equal(r.structuredContent.result_data.target_language, 'es');
      const cues = parseVttStrict(textsOf(r)[1]!);
      assert.match(cues.map((c) => c.text).join(' '), /país/);
      assert.equal(await credits(), before - 5);
    });

    it('get_comments cuts a large comments file inline, with a note and the link; the resource holds all of it', async () => {
      const before = await credits();
      const r = await call(http, 'get_comments', { url: pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), max_comments: 1000, sort: 'newest' });
      assert.ok(!r.isError, textsOf(r)[0]);
      const job = r.structuredContent;
      const whole = await (await fetch(job.download_url)).text();
      const inline = textsOf(r)[1]!;
      assert.ok(whole.length > 20_000);
      assert.ok(inline.startsWith(whole.slice(0, 20_000)));
      assert.ok(inline.includes(`[truncated: the first 20,000 of ${whole.length.toLocaleString('en')} characters are shown. The whole file: ${job.download_url}`), inline.slice(20_000));
      assert.ok(inline.includes(`job://${job.job_id}/output`));
      const output = await http.readResource({ uri: `job://${job.job_id}/output` });
      assert.equal((output.contents[0] as { text: string }).text, whole);
      assert.equal(JSON.parse(whole).comment_count, job.result_data.comment_count);
      assert.equal(await credits(), before - 1);
    });

    it('get_job, list_jobs and get_account are free and answer as REST does; another account sees none of these jobs', async () => {
      const before = await credits();
      const job = await call(http, 'get_job', { job_id: transcribeJobId });
      assert.deepEqual(job.structuredContent, (await s.api('GET', `/v1/jobs/${transcribeJobId}`)).body);
      assert.equal(JSON.parse(textsOf(job)[1]!).language, 'en', 'a completed transcript comes inline');
      const list = await call(http, 'list_jobs', { job_type: 'download', limit: 2 });
      assert.deepEqual(list.structuredContent, (await s.api('GET', '/v1/jobs?job_type=download&limit=2')).body);
      assert.equal(list.structuredContent.items.length, 2);
      const account = await call(http, 'get_account', {});
      assert.deepEqual(account.structuredContent, (await s.api('GET', '/v1/account')).body);
      assert.equal(account.structuredContent.balance, before);
      const { resources } = await http.listResources();
      assert.ok(resources.some((res) => res.uri === `job://${transcribeJobId}`));
      assert.equal(await credits(), before);

      const stranger = await newAccount(s, 'mcp-stranger', 'starter');
      const theirs = await connectHttp(s.base, stranger.key);
      try {
        const missing = await call(theirs, 'get_job', { job_id: transcribeJobId });
        assert.equal(missing.isError, true);
        assert.equal(textsOf(missing)[0], `No job with id ${transcribeJobId} in this account`);
        assert.equal(errorOf(missing).status, 404);
        assert.deepEqual((await call(theirs, 'list_jobs', {})).structuredContent.items, []);
        await assert.rejects(theirs.readResource({ uri: `job://${transcribeJobId}/output` }), (err: Error & { code?: number }) => err.code === -32002 && err.message.includes(`No job with id ${transcribeJobId} in this account`));
      } finally {
        await theirs.close();
      }
    });

    it('tool errors carry REST\'s detail sentences (422 with field names, 402 with cost and balance) and charge nothing', async () => {
      const before = await credits();
      for (const [tool, path, args] of [
        ['download_media', '/v1/download', { url: fx.url('/media/v480.mp4'), clip_start: '0:03', clip_end: '0:01' }],
        ['transcribe', '/v1/transcribe', { url: speech.url('jfk.wav'), model_size: 'small' }],
        ['get_comments', '/v1/comments', { url: pt.url('/w/x'), max_comments: 0, bogus: true }],
        ['create_preview', '/v1/preview', { url: fx.url('/watch/trailer'), preview_type: 'gif', duration: 20 }],
      ] as const) {
        const r = await call(http, tool, args);
        const rest = await s.api('POST', path, args);
        assert.equal(rest.status, 422);
        assert.equal(r.isError, true, tool);
        assert.equal(textsOf(r)[0], rest.body.detail);
        assert.deepEqual(errorOf(r), { status: 422, detail: rest.body.detail, errors: rest.body.errors });
      }
      const wait = await call(http, 'fingerprint', { url: fx.url('/media/v720.mp4'), wait_seconds: 301 });
      assert.equal(textsOf(wait)[0], 'wait_seconds: must be at most 300');
      await assert.rejects(call(http, 'make_coffee', {}), (err: Error & { code?: number }) => err.code === -32602 && /Unknown tool make_coffee/.test(err.message));
      assert.equal(await credits(), before);

      await cli(s.env, 'accounts', 'credits', s.accountId, `--add=${3 - before}`);
      try {
        const args = { url: speech.url('jfk.wav') };
        const r = await call(http, 'transcribe', args);
        const rest = await s.api('POST', '/v1/transcribe', args);
        assert.equal(rest.status, 402);
        assert.equal(r.isError, true);
        assert.equal(textsOf(r)[0], rest.body.detail);
        assert.match(textsOf(r)[0]!, /4.*3/);
        assert.equal(await credits(), 3);
      } finally {
        await cli(s.env, 'accounts', 'credits', s.accountId, `--add=${before - 3}`);
      }
    });

    it('a job that fails is an error result with its error_message, refunded once, as over REST', async () => {
      const before = await credits();
      const url = pt.url(`/w/${PT_VIDEOS.closed.shortUUID}`);
      const r = await call(http, 'get_comments', { url });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.status, 'failed');
      assert.match(r.structuredContent.error_message, /Comments are disabled/);
      assert.equal(textsOf(r)[0], r.structuredContent.error_message);
      const rest = await s.api('POST', '/v1/comments', { url });
      const restJob = await s.waitJob(rest.body.job_id);
      assert.equal(restJob.error_message, r.structuredContent.error_message);
      assert.equal(await credits(), before);
      const account = await call(http, 'get_account', {});
      assert.equal(account.structuredContent.balance, before, 'charged once and refunded once, per job');
    });
  });

  describe('over stdio (bin/mediasvc mcp)', () => {
    it('a transcription forwards its progress notifications and returns the transcript; get_account and resources come through', async () => {
      const before = await credits();
      const progress: Progress[] = [];
      const r = await call(stdio, 'transcribe', { url: speech.url('jfk.wav'), model_size: 'tiny', language: 'en', output_format: 'vtt' }, { onprogress: (p) => progress.push(p) });
      assert.ok(!r.isError, textsOf(r)[0]);
      assertProgress(progress);
      const cues = parseVttStrict(textsOf(r)[1]!);
      assert.ok(wordErrorRate(EXPECTED['jfk.wav']!.text!, cues.map((c) => c.text).join(' ')) <= 0.2);
      assert.equal(await credits(), before - 4);
      const account = await call(stdio, 'get_account', {});
      assert.equal(account.structuredContent.balance, before - 4);

      const viaStdio = await stdio.readResource({ uri: `job://${r.structuredContent.job_id}/output` });
      const viaHttp = await http.readResource({ uri: `job://${r.structuredContent.job_id}/output` });
      assert.deepEqual(viaStdio, viaHttp);
      assert.deepEqual(await stdio.listResourceTemplates(), await http.listResourceTemplates());
    });

    it('every other tool works through the bridge on fixture media', async () => {
      const before = await credits();
      const info = await call(stdio, 'get_video_info', { url: fx.url('/watch/trailer') });
      assert.equal(info.structuredContent.title, 'Fixture Trailer');
      const download = await call(stdio, 'download_media', { url: fx.url('/media/audio.mp3'), format: 'wav' });
      assert.equal(download.structuredContent.result_data.format, 'wav');
      const preview = await call(stdio, 'create_preview', { url: fx.url('/watch/trailer'), preview_type: 'thumbnail', width: 160 });
      assert.equal(preview.content.find((c) => c.type === 'image')?.mimeType, 'image/jpeg');
      const fp = await call(stdio, 'fingerprint', { url: fx.url('/media/v720.mp4'), hash_size: 8 });
      assert.match(fp.structuredContent.result_data.difference_hash, /^[0-9a-f]{16}$/);
      const translated = await call(stdio, 'translate', { url: speech.url('jfk.wav'), target_language: 'es', source_language: 'en', output_format: 'srt', model_size: 'tiny' });
      assert.match(textsOf(translated)[1]!, /país/);
      const comments = await call(stdio, 'get_comments', { url: pt.url(`/w/${PT_VIDEOS.empty.shortUUID}`) });
      assert.equal(comments.structuredContent.result_data.comment_count, 0);
      assert.equal(JSON.parse(textsOf(comments)[1]!).comment_count, 0);
      for (const r of [info, download, preview, fp, translated, comments]) assert.ok(!r.isError, textsOf(r)[0]);
      assert.equal(await credits(), before - 1 - 1 - 1 - 1 - 5 - 1);

      const job = await call(stdio, 'get_job', { job_id: download.structuredContent.job_id });
      assert.deepEqual(job.structuredContent, (await s.api('GET', `/v1/jobs/${download.structuredContent.job_id}`)).body);
      const list = await call(stdio, 'list_jobs', { limit: 1 });
      assert.equal(list.structuredContent.items[0].job_id, comments.structuredContent.job_id);
    });

    it('errors come through unchanged: REST\'s 422 sentence as an error result, an unknown resource as -32002', async () => {
      const args = { url: fx.url('/media/v480.mp4'), quality: 'audio', format: 'mp4' };
      const r = await call(stdio, 'download_media', args);
      assert.equal(r.isError, true);
      assert.equal(textsOf(r)[0], (await s.api('POST', '/v1/download', args)).body.detail);
      const missing = '00000000-0000-4000-8000-000000000000';
      const viaHttp = await http.readResource({ uri: `job://${missing}` }).catch((e: unknown) => e as Error & { code: number });
      const viaStdio = await stdio.readResource({ uri: `job://${missing}` }).catch((e: unknown) => e as Error & { code: number });
      assert.equal((viaStdio as { code: number }).code, -32002);
      assert.equal((viaStdio as Error).message, (viaHttp as Error).message);
      assert.equal((viaStdio as Error).message, `MCP error -32002: No job with id ${missing} in this account`);
    });

    it('a tool result waits until the client has answered a ping sent after its progress notifications (an SDK client drops progress read in one chunk with the result), 5 s at most', async () => {
      const bridge = spawn(CLI, ['mcp'], { env: { ...process.env, MEDIASVC_URL: s.base, MEDIASVC_API_KEY: s.key }, stdio: ['pipe', 'pipe', 'inherit'] });
      const messages: any[] = [];
      let pending = '';
      bridge.stdout.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
          messages.push(JSON.parse(pending.slice(0, nl)));
          pending = pending.slice(nl + 1);
        }
      });
      const send = (message: object) => bridge.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
      const next = (what: string, test: (m: any) => boolean) => waitFor(what, async () => messages.find(test), 120_000, 20);
      try {
        send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-stdio', version: '1' } } });
        await next('the initialize result', (m) => m.id === 1);
        send({ method: 'notifications/initialized' });
        send({ id: 2, method: 'tools/call', params: { name: 'fingerprint', arguments: { url: fx.url('/media/v480.mp4') }, _meta: { progressToken: 'raw' } } });
        const ping = await next('a ping from the bridge', (m) => m.method === 'ping');
        const before = messages.slice(0, messages.indexOf(ping));
        const progress = before.filter((m) => m.method === 'notifications/progress').map((m) => m.params);
        assert.ok(progress.length >= 2 && progress.every((p) => p.progressToken === 'raw') && progress.at(-1).progress === 100, JSON.stringify(before));
        await new Promise((r) => setTimeout(r, 500));
        assert.equal(messages.find((m) => m.id === 2), undefined, 'no result before the ping is answered');
        send({ id: ping.id, result: {} });
        const result = await next('the tool result', (m) => m.id === 2);
        assert.ok(result.result && !result.result.isError, JSON.stringify(result));
        assert.ok(messages.indexOf(result) > messages.indexOf(ping));

        // a client that never answers the ping still gets its result, after the bridge's 5 s wait
        send({ id: 3, method: 'tools/call', params: { name: 'fingerprint', arguments: { url: fx.url('/media/v480.mp4') }, _meta: { progressToken: 'unanswered' } } });
        await next('a second ping', (m) => m.method === 'ping' && m.id !== ping.id);
        const late = await next('the result without a pong', (m) => m.id === 3);
        assert.ok(late.result && !late.result.isError, JSON.stringify(late));
      } finally {
        bridge.stdin.end();
        bridge.kill();
      }
    });
  });

  describe('rate limit', () => {
    it('an account on the free plan gets 10 requests a minute: the 11th MCP request answers 429, over HTTP and through the bridge', async () => {
      const overHttp = await newAccount(s, 'mcp-free-http', 'free');
      const overStdio = await newAccount(s, 'mcp-free-stdio', 'free');
      await roomInRateWindow(40);

      // Every HTTP request to /mcp counts, as on REST: connecting is initialize, initialized and the GET the client tries (405).
      const responses: { method: string; status: number; retryAfter: string | null }[] = [];
      const client = await connectHttp(s.base, overHttp.key, (res, method) => responses.push({ method, status: res.status, retryAfter: res.headers.get('retry-after') }));
      let refused: (Error & { code?: number }) | undefined;
      while (!refused && responses.length < 20) {
        await client.callTool({ name: 'get_account', arguments: {} }).catch((err: Error) => (refused = err));
      }
      await client.close();
      assert.equal(responses.length, 11);
      assert.deepEqual(responses.slice(0, 10).map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 202, 405]);
      assert.deepEqual([responses[10]!.method, responses[10]!.status], ['POST', 429]);
      assert.ok(Number(responses[10]!.retryAfter) > 0);
      assert.equal(refused?.code, 429);
      assert.match(refused!.message, /Rate limit of 10 requests per minute exceeded; retry in \d+ s/);

      // Through the bridge the refusal is an error result with the same sentence.
      const bridge = await connectStdio(s.base, overStdio.key);
      try {
        const results: ToolResult[] = [];
        for (let i = 0; i < 8; i++) results.push(await call(bridge.client, 'get_account', {}));
        assert.deepEqual(results.map((r) => r.isError ?? false), [false, false, false, false, false, false, false, true]);
        assert.match(textsOf(results[7]!)[0]!, /^Rate limit of 10 requests per minute exceeded; retry in \d+ s$/);
        assert.equal(errorOf(results[7]!).status, 429);
      } finally {
        await bridge.client.close();
      }
    });
  });

  describe('JSON-RPC batches', () => {
    it('a batch of 30 download_media calls from a free key: each message counts, 10 are served, the other 20 get the 429 error in their own response, and at most 10 jobs exist', async () => {
      const free = await newAccount(s, 'mcp-free-batch', 'free');
      const before = Number((await cli(s.env, 'accounts', 'credits', free.accountId)).pop());
      await roomInRateWindow(40);
      const batch = Array.from({ length: 30 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'download_media', arguments: { url: fx.url('/media/v480.mp4'), wait_seconds: 0 } },
      }));
      const res = await fetch(`${s.base}/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${free.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(batch),
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
      // one JSON array, or one SSE event per answer
      const answers = (res.headers.get('content-type')?.startsWith('text/event-stream')
        ? text.split('\n').filter((l) => l.startsWith('data: ')).flatMap((l) => JSON.parse(l.slice(6)) as unknown)
        : (JSON.parse(text) as unknown[])) as Array<{ id: number; result?: ToolResult; error?: { code: number; message: string; data?: { status: number } } }>;
      assert.deepEqual(answers.map((a) => a.id).sort((a, b) => a - b), batch.map((m) => m.id), 'every request answered once');
      const served = answers.filter((a) => a.result);
      const refused = answers.filter((a) => a.error);
      console.log(`      batch of 30 on a free key: ${served.length} served, ${refused.length} refused with 429`);
      assert.equal(served.length, 10);
      for (const a of refused) {
        assert.equal(a.error!.data?.status, 429, JSON.stringify(a));
        assert.match(a.error!.message, /^Rate limit of 10 requests per minute exceeded; retry in \d+ s$/);
      }
      const jobs = served.filter((a) => !a.result!.isError).map((a) => a.result!.structuredContent?.job_id as string);
      assert.ok(jobs.length <= 10 && jobs.every(Boolean), JSON.stringify(served));
      const charged = before - Number((await cli(s.env, 'accounts', 'credits', free.accountId)).pop());
      assert.equal(charged, jobs.length, 'credits charged for exactly the jobs the served messages created');
      // the key's minute is spent: the next request is refused whole
      const next = await fetch(`${s.base}/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${free.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(batch[0]) });
      assert.equal(next.status, 429);
    });
  });

  describe('cancel_job', () => {
    it('cancels a running job: it ends failed with "cancelled by the client", refunded once; a second cancel is a 409 error result', async () => {
      const before = await credits();
      const started = await call(http, 'transcribe', { url: speech.stalledUrl('jfk.wav'), wait_seconds: 0 });
      const jobId = started.structuredContent.job_id as string;
      assert.ok(['pending', 'processing'].includes(started.structuredContent.status));
      assert.equal(await credits(), before - 4);

      const cancelled = await call(http, 'cancel_job', { job_id: jobId });
      assert.ok(!cancelled.isError, textsOf(cancelled)[0]);
      const job = cancelled.structuredContent.status === 'failed' ? cancelled.structuredContent : await s.waitJob(jobId);
      assert.equal(job.status, 'failed');
      assert.equal(job.error_message, 'cancelled by the client');
      assert.equal(await credits(), before);

      const again = await call(http, 'cancel_job', { job_id: jobId });
      const rest = await s.api('POST', `/v1/jobs/${jobId}/cancel`);
      assert.equal(rest.status, 409);
      assert.equal(again.isError, true);
      assert.equal(textsOf(again)[0], rest.body.detail);
      assert.equal(errorOf(again).status, 409);
      assert.equal(await credits(), before);
    });
  });
});
