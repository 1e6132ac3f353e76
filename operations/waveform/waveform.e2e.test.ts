import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { FIXTURE, startFixturePlatform, type FixturePlatform } from '../../test/helpers/fixture-platform';
import { ffprobe } from '../../test/helpers/media';
import { startServeStack, type JobBody, type ServeStack } from '../../test/helpers/serve-stack';
import { rowOf } from './peaks';

const run = promisify(execFile);

/** gaps.m4a: 9 s at 44.1 kHz, the same in both channels; silence, then a 440 Hz tone during 2–4 s and 5–7 s. */
const GAPS = { seconds: 9, tone: [[2, 4], [5, 7]] as const };
const inTone = (t: number) => GAPS.tone.some(([a, b]) => t > a + 0.15 && t < b - 0.15);
const inSilence = (t: number) => GAPS.tone.every(([a, b]) => t < a - 0.15 || t > b + 0.15);

describe('waveform end to end: POST /v1/waveform through serve (audiowaveform JSON, PNG, MCP, a source without audio)', function () {
  let fx: FixturePlatform;
  let s: ServeStack;
  /** The tone's peak as a fraction of full scale, measured by ffmpeg's astats on the source itself. */
  let tonePeak: number;

  async function completed(body: Record<string, unknown>): Promise<JobBody> {
    const res = await s.api('POST', '/v1/waveform', body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const job = await s.waitJob(res.body.job_id as string);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    return job;
  }

  before(async function () {
    fx = await startFixturePlatform();
    s = await startServeStack({ name: 'waveform-e2e', plan: 'business' });
    const source = path.join(s.dataDir, 'gaps.m4a');
    fs.writeFileSync(source, Buffer.from(await (await fetch(fx.url(FIXTURE.audio.gaps))).arrayBuffer()));
    const { stderr } = await run('ffmpeg', ['-hide_banner', '-i', source, '-af', 'astats=measure_perchannel=none', '-f', 'null', '-']);
    const peakDb = Number(/Peak level dB: (-?[\d.]+)/.exec(stderr)?.[1]);
    tonePeak = 10 ** (peakDb / 20);
    assert.ok(tonePeak > 0.2 && tonePeak < 0.6, `the tone's peak: ${tonePeak}`);
  });

  after(async () => {
    await s?.stop();
    await fx?.close();
  });

  it('json: audiowaveform data version 2 with the requested pairs, silence near 0 and the tone at its measured peak, for 1 credit', async () => {
    const before = await s.credits();
    const job = await completed({ url: fx.url(FIXTURE.audio.gaps), points: 90 });
    assert.equal(job.credits_charged, 1);
    assert.equal(await s.credits(), before - 1);
    const res = await fetch(job.download_url!);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const data = (await res.json()) as { version: number; channels: number; sample_rate: number; samples_per_pixel: number; bits: number; length: number; data: number[] };
    assert.deepEqual([data.version, data.channels, data.bits, data.sample_rate, data.length, data.data.length], [2, 1, 8, 44100, 90, 180]);
    const r = job.result_data as Record<string, number | string>;
    assert.equal(r.format, 'json');
    assert.equal(r.points, 90);
    assert.ok(Math.abs(Number(r.duration) - GAPS.seconds) < 0.1, `duration ${r.duration}`);
    // each pair covers duration / 90 seconds: 0.1 s
    assert.equal(data.samples_per_pixel, Math.floor((Number(r.duration) * 44100) / 90));
    const secondsPerPair = data.samples_per_pixel / data.sample_rate;
    for (let px = 0; px < data.length; px++) {
      const [min, max] = [data.data[2 * px]!, data.data[2 * px + 1]!];
      const t = (px + 0.5) * secondsPerPair;
      if (inSilence(t)) assert.ok(Math.abs(min) <= 1 && Math.abs(max) <= 1, `pair ${px} (${t.toFixed(2)} s) is silence: ${min}, ${max}`);
      // 8-bit: full scale is 128
      if (inTone(t)) assert.ok(Math.abs(max - tonePeak * 128) <= 3 && Math.abs(-min - tonePeak * 128) <= 3, `pair ${px} (${t.toFixed(2)} s) is the tone at ${(tonePeak * 128).toFixed(1)}: ${min}, ${max}`);
    }
  });

  it('png: an image of the requested size whose columns follow the audio (one row for silence, the tone\'s peak above and below)', async () => {
    const [width, height] = [300, 101];
    const job = await completed({ url: fx.url(FIXTURE.audio.gaps), format: 'png', width, height });
    const r = job.result_data as Record<string, number | string>;
    assert.deepEqual([r.format, r.width, r.height], ['png', width, height]);
    const res = await fetch(job.download_url!);
    assert.equal(res.headers.get('content-type'), 'image/png');
    const file = path.join(s.dataDir, 'waveform.png');
    fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const stream = (await ffprobe(file)).streams[0]!;
    assert.deepEqual([stream.codec_name, stream.width, stream.height], ['png', width, height]);
    const { data, info } = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const painted = (x: number) => [...Array(height).keys()].filter((y) => data[(y * info.width + x) * 4 + 3]! > 0);
    const centre = rowOf(0, height);
    for (const t of [1, 4.5, 8]) assert.deepEqual(painted(Math.floor((t / GAPS.seconds) * width)), [centre], `silence at ${t} s`);
    for (const t of [3, 6]) {
      const rows = painted(Math.floor((t / GAPS.seconds) * width));
      const peak = tonePeak * 32768;
      assert.ok(Math.abs(rows[0]! - rowOf(peak, height)) <= 2 && Math.abs(rows.at(-1)! - rowOf(-peak, height)) <= 2, `tone at ${t} s: rows ${rows[0]}–${rows.at(-1)}, expected ${rowOf(peak, height)}–${rowOf(-peak, height)}`);
      assert.equal(rows.length, rows.at(-1)! - rows[0]! + 1, 'the column is filled');
    }
  });

  it('a platform page (yt-dlp picks its audio): the requested pairs over the page\'s measured duration', async () => {
    const job = await completed({ url: fx.url('/watch/trailer'), points: 200 });
    const data = (await (await fetch(job.download_url!)).json()) as { length: number; data: number[]; sample_rate: number };
    const r = job.result_data as Record<string, number | string>;
    assert.deepEqual([data.length, data.data.length, r.points], [200, 400, 200]);
    assert.ok(Math.abs(Number(r.duration) - FIXTURE.page.duration) < 0.2, `duration ${r.duration}`);
    assert.equal(r.title, FIXTURE.page.title);
    assert.ok(data.data.some((v) => Math.abs(v) > 8), 'the page\'s tone is in the peaks');
  });

  it('a source without audio fails with a message that says so, refunded once', async () => {
    const silentVideo = path.join(s.dataDir, 'no-audio.mp4');
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=10:duration=2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', silentVideo]);
    const form = new FormData();
    form.append('file', new Blob([fs.readFileSync(silentVideo)], { type: 'video/mp4' }), 'no-audio.mp4');
    const upload = await fetch(`${s.base}/v1/uploads`, { method: 'POST', headers: { authorization: `Bearer ${s.key}` }, body: form });
    const uploaded = (await upload.json()) as { upload_id: string };
    assert.equal(upload.status, 201, JSON.stringify(uploaded));

    const before = await s.credits();
    const res = await s.api('POST', '/v1/waveform', { upload_id: uploaded.upload_id });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const job = await s.waitJob(res.body.job_id as string);
    assert.equal(job.status, 'failed');
    assert.match(job.error_message ?? '', /no audio track/);
    assert.equal(await s.credits(), before, 'charged 1, refunded 1');
    const usage = (await s.api('GET', '/v1/account')).body.usage_this_month as Record<string, number>;
    assert.equal(usage.waveform, 3, 'the three completed jobs above; the failed one is refunded, not counted');
  });

  it('a field of the other format is a 422 naming it; the MCP tool get_waveform returns the PNG inline', async () => {
    const bad = await s.api('POST', '/v1/waveform', { url: fx.url(FIXTURE.audio.gaps), format: 'png', points: 50 });
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    assert.deepEqual(bad.body.errors, [{ field: 'points', message: 'applies only to format json' }]);

    const client = new Client({ name: 'waveform-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }));
    try {
      const result = (await client.callTool({ name: 'get_waveform', arguments: { url: fx.url(FIXTURE.audio.gaps), format: 'png', width: 200, height: 40, wait_seconds: 120 } }, undefined, { timeout: 150_000 })) as CallToolResult;
      assert.ok(!result.isError, JSON.stringify(result.content));
      assert.equal((result.structuredContent as { status: string }).status, 'completed');
      const image = result.content.find((c) => c.type === 'image');
      assert.ok(image && image.type === 'image' && image.mimeType === 'image/png', JSON.stringify(result.content.map((c) => c.type)));
      const meta = await sharp(Buffer.from(image.data, 'base64')).metadata();
      assert.deepEqual([meta.width, meta.height], [200, 40]);
    } finally {
      await client.close();
    }
  });
});
