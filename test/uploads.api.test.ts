import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startApiHarness, type ApiHarness } from './helpers/api-harness';
import { wavHeader } from './helpers/wav';

/** A WAV header for `dataBytes` of 16-bit stereo PCM at 48 kHz: a valid file of any size, streamed without a file on disk. */
const stereoWavHeader = (dataBytes: number) => wavHeader(dataBytes, { channels: 2, rate: 48_000 });

interface Sent {
  status: number;
  body: any;
  /** Bytes the client had written when the answer came. */
  sentWhenAnswered: number;
}

/**
 * Streams a body of `total` bytes (header first, then a tone) in 64 KiB chunks with backpressure;
 * `chunked` leaves Content-Length out. Resolves with the answer, however far the body got.
 */
function streamUpload(baseUrl: string, key: string, opts: { total: number; header?: Buffer; chunked?: boolean; declaredLength?: number; contentType?: string }): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const url = new URL('/v1/uploads', baseUrl);
    const headers: Record<string, string | number> = { authorization: `Bearer ${key}`, 'content-type': opts.contentType ?? 'audio/wav', 'content-disposition': 'attachment; filename="tone.wav"' };
    if (!opts.chunked) headers['content-length'] = opts.declaredLength ?? opts.total;
    const req = http.request(url, { method: 'POST', headers });
    let sent = 0;
    let answered = false;
    const chunk = Buffer.alloc(64 * 1024);
    for (let i = 0; i < chunk.length / 2; i++) chunk.writeInt16LE(Math.round(8000 * Math.sin(i / 10)), i * 2);
    req.on('response', (res) => {
      answered = true;
      const at = sent;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, sentWhenAnswered: at }));
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const write = () => {
      while (!answered && sent < opts.total) {
        const piece = sent === 0 && opts.header ? opts.header : chunk.subarray(0, Math.min(chunk.length, opts.total - sent));
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      if (!answered) req.end();
    };
    write();
  });
}

describe('uploads: POST /v1/uploads streams a file to storage, checks it, and any operation takes its upload_id', function () {
  let h: ApiHarness;
  let key: string;
  let other: string;
  let dir: string;
  let mp4: Buffer;
  before(async () => {
    h = await startApiHarness('sqlite');
    ({ key } = await h.newAccount('pro'));
    ({ key: other } = await h.newAccount('pro'));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-test-'));
    const file = path.join(dir, 'small.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-f', 'lavfi', '-i', 'sine=frequency=440', '-t', '2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', file]);
    mp4 = fs.readFileSync(file);
  });
  after(async () => {
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const multipart = (name: string, body: Buffer, type: string, k = key) => {
    const form = new FormData();
    form.append('file', new Blob([body], { type }), name);
    return fetch(`${h.baseUrl}/v1/uploads`, { method: 'POST', headers: { authorization: `Bearer ${k}` }, body: form });
  };

  it('takes a multipart file: 201 with id, name, size, the type it found and an expiry; the bytes are stored as sent', async () => {
    const res = await multipart('clip.mp4', mp4, 'application/octet-stream');
    const body = (await res.json()) as any;
    assert.equal(res.status, 201, JSON.stringify(body));
    assert.match(body.upload_id, /^upl_[A-Za-z0-9]{24}$/);
    assert.equal(body.filename, 'clip.mp4');
    assert.equal(body.size, mp4.length);
    assert.equal(body.content_type, 'video/mp4', 'found by probing, not taken from the declared type');
    assert.ok(Date.parse(body.expires_at) > Date.now());
    assert.equal(res.headers.get('location'), `/v1/uploads/${body.upload_id}`);
    assert.deepEqual(fs.readFileSync(h.storage.uploadPath(body.upload_id)), mp4);
    const read = await h.request('GET', `/v1/uploads/${body.upload_id}`, { key });
    assert.equal(read.status, 200);
    assert.equal(read.body.size, mp4.length);
    assert.equal((await h.request('GET', `/v1/uploads/${body.upload_id}`, { key: other })).status, 404, 'another account does not see it');
  });

  it('takes a raw body with its Content-Type, named by Content-Disposition', async () => {
    const res = await fetch(`${h.baseUrl}/v1/uploads`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'video/mp4', 'content-disposition': 'attachment; filename="raw clip.mp4"' }, body: mp4 });
    const body = (await res.json()) as any;
    assert.equal(res.status, 201, JSON.stringify(body));
    assert.equal(body.filename, 'raw clip.mp4');
    assert.equal(body.size, mp4.length);
  });

  it('answers 415 naming what a file is when it is not audio or video, and keeps nothing', async () => {
    const png = execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'color=red:size=64x64', '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', '-']);
    const cases: [string, Buffer, RegExp][] = [
      ['pic.png', png, /a PNG image/],
      ['notes.txt', Buffer.from('just some words\n'), /plain text/],
      ['list.m3u8', Buffer.from('#EXTM3U\n#EXT-X-VERSION:3\nhttp://127.0.0.1:9/a.ts\n'), /HLS playlist/],
      ['doc.pdf', Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n'), /PDF document/],
      ['empty.mp4', Buffer.alloc(0), /empty file/],
    ];
    for (const [name, bytes, what] of cases) {
      const res = await multipart(name, bytes, 'video/mp4');
      const body = (await res.json()) as any;
      assert.equal(res.status, 415, `${name}: ${res.status} ${JSON.stringify(body)}`);
      assert.match(body.detail, what, name);
      assert.match(body.detail, /not audio or video/);
    }
    assert.deepEqual(fs.readdirSync(h.config.uploadsDir).filter((n) => !n.endsWith('.json')).length, 2, 'only the two media uploads above are stored');
  });

  it('takes form fields named __proto__, constructor or nothing as plain fields (a fuzzer found the connection dropped)', async () => {
    const form = new FormData();
    for (const name of ['', '__proto__', 'constructor']) form.append(name, '{}');
    form.append('file', new Blob([mp4], { type: 'video/mp4' }), 'clip.mp4');
    const res = await fetch(`${h.baseUrl}/v1/uploads`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const body = (await res.json()) as any;
    assert.equal(res.status, 201, JSON.stringify(body));
    assert.equal(body.size, mp4.length);
    assert.equal(({} as Record<string, unknown>).length, undefined, 'no prototype was touched');
  });

  it('refuses a body over the limit with 413 before reading it: at once for a declared length, at the limit for a chunked body', async () => {
    const limit = h.config.maxSourceBytes;
    h.config.maxSourceBytes = 4 * 1024 * 1024;
    try {
      const declared = await streamUpload(h.baseUrl, key, { total: 64 * 1024 * 1024, declaredLength: 600 * 1024 * 1024, header: stereoWavHeader(600 * 1024 * 1024) });
      assert.equal(declared.status, 413, JSON.stringify(declared.body));
      assert.match(declared.body.detail, /larger than 4 MiB, the upload limit of this service/);
      assert.ok(declared.sentWhenAnswered < 32 * 1024 * 1024, `answered after ${declared.sentWhenAnswered} bytes of 64 MiB`);
      const chunked = await streamUpload(h.baseUrl, key, { total: 64 * 1024 * 1024, chunked: true, header: stereoWavHeader(64 * 1024 * 1024) });
      assert.equal(chunked.status, 413, JSON.stringify(chunked.body));
      assert.ok(chunked.sentWhenAnswered < 32 * 1024 * 1024, `answered after ${chunked.sentWhenAnswered} bytes of 64 MiB`);
      const form = await multipart('big.wav', Buffer.concat([stereoWavHeader(6 * 1024 * 1024), Buffer.alloc(6 * 1024 * 1024)]), 'audio/wav');
      assert.equal(form.status, 413);
      assert.deepEqual(fs.readdirSync(h.config.uploadsDir).filter((n) => n.endsWith('.part')), [], 'no partial body is left');
    } finally {
      h.config.maxSourceBytes = limit;
    }
  });

  it('streams a 200 MB upload to disk: the process grows by less than 50 MB', async () => {
    const total = 200 * 1024 * 1024;
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const res = await streamUpload(h.baseUrl, key, { total, header: stereoWavHeader(total - 44) }).finally(() => clearInterval(timer));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.size, total);
    assert.equal(res.body.content_type, 'audio/wav');
    const grew = (peak - before) / 1024 / 1024;
    console.log(`      200 MB upload: RSS ${Math.round(before / 1048576)} MB before, peak ${Math.round(peak / 1048576)} MB (+${grew.toFixed(1)} MB; client and server in this process)`);
    assert.ok(grew < 50, `RSS grew by ${grew.toFixed(1)} MB`);
    fs.rmSync(h.storage.uploadPath(res.body.upload_id));
  });

  it('an OpenAI-compatible call whose job outlasts OPENAI_WAIT_SECONDS answers 202 with the job id (header and body) to poll', async () => {
    const wait = h.config.openaiWaitSeconds;
    h.config.openaiWaitSeconds = 1;
    try {
      // the harness's job engine never runs jobs: this one stays pending
      const form = new FormData();
      form.append('model', 'whisper-1');
      form.append('file', new Blob([mp4]), 'clip.mp4');
      const res = await fetch(`${h.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      const body = (await res.json()) as any;
      assert.equal(res.status, 202, JSON.stringify(body));
      const jobId = res.headers.get('mediasvc-job-id');
      assert.equal(body.job_id, jobId);
      assert.equal(res.headers.get('location'), `/v1/jobs/${jobId}`);
      assert.match(body.detail, /still running after 1 s; poll GET \/v1\/jobs\//);
      const job = await h.request('GET', `/v1/jobs/${jobId}`, { key });
      assert.equal(job.body.job_type, 'transcribe');
      assert.equal(job.body.credits_charged, 4);
      assert.match(job.body.source_url, /^upload:upl_/);
      // OpenAI's error shape on these routes, with its 400 for a bad parameter
      const bad = new FormData();
      bad.append('model', 'whisper-1');
      bad.append('response_format', 'xml');
      bad.append('file', new Blob([mp4]), 'clip.mp4');
      const refused = await fetch(`${h.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: bad });
      assert.equal(refused.status, 400);
      assert.deepEqual(Object.keys(((await refused.json()) as any).error).sort(), ['code', 'message', 'param', 'type']);
    } finally {
      h.config.openaiWaitSeconds = wait;
    }
  });

  it('every operation takes upload_id in place of url: exactly one of them, only the account\'s own, recorded as upload:{id}', async () => {
    const res = await multipart('clip.mp4', mp4, 'video/mp4');
    const { upload_id } = (await res.json()) as { upload_id: string };
    const bodies: [string, Record<string, unknown>][] = [
      ['/v1/download', { format: 'mp4' }],
      ['/v1/preview', { preview_type: 'thumbnail' }],
      ['/v1/fingerprint', {}],
      ['/v1/transcribe', {}],
      ['/v1/translate', { target_language: 'es' }],
    ];
    for (const [p, extra] of bodies) {
      const created = await h.request('POST', p, { key, body: { upload_id, ...extra } });
      assert.equal(created.status, 202, `${p}: ${created.text}`);
      const started = h.orchestrator.started[h.orchestrator.started.length - 1]!;
      assert.equal(started.sourceUrl, `upload:${upload_id}`, p);
      const job = await h.request('GET', `/v1/jobs/${created.body.job_id}`, { key });
      assert.equal(job.body.source_url, `upload:${upload_id}`);
      assert.equal(job.body.parameters.upload_id, upload_id);
      assert.equal('url' in job.body.parameters, false);
    }
    const both = await h.request('POST', '/v1/preview', { key, body: { upload_id, url: 'http://127.0.0.1:9/v.mp4', preview_type: 'gif' } });
    assert.equal(both.status, 422);
    assert.match(both.body.detail, /upload_id and url name two sources/);
    const neither = await h.request('POST', '/v1/download', { key, body: {} });
    assert.equal(neither.status, 422);
    assert.match(neither.body.detail, /url: is required \(or upload_id/);
    const foreign = await h.request('POST', '/v1/transcribe', { key: other, body: { upload_id } });
    assert.equal(foreign.status, 404, foreign.text);
    assert.match(foreign.body.detail, /no upload with id/);
    const bad = await h.request('POST', '/v1/transcribe', { key, body: { upload_id: 'upl_nope' } });
    assert.equal(bad.status, 422);
    const comments = await h.request('POST', '/v1/comments', { key, body: { url: 'http://127.0.0.1:9/watch', upload_id } });
    assert.equal(comments.status, 422);
    assert.match(comments.body.detail, /an uploaded file has none/);
  });
});
