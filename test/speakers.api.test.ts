// Speaker label fields on the speech create calls: defaults, the extra credit, and a clear 422.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApiHarness, type ApiHarness } from './helpers/api-harness';
import { waitFor } from './helpers/processes';
import { SPEECH_DIR } from './helpers/speech-fixtures';

const SOURCE = 'http://127.0.0.1:9/talk.m4a';

describe('speaker labels API: diarize and num_speakers on transcribe and translate', function () {
  let h: ApiHarness;
  let key: string;
  let accountId: string;
  before(async () => {
    h = await startApiHarness('sqlite');
    ({ key, accountId } = await h.newAccount('business'));
  });
  after(async () => {
    await h?.close();
  });
  const post = (p: string, body: Record<string, unknown>) => h.request('POST', p, { key, body });
  const lastParams = () => h.orchestrator.started[h.orchestrator.started.length - 1]!.params as Record<string, unknown>;

  it('off by default; diarize or multichannel costs one credit more (transcribe 5, translate 6), with or without num_speakers', async () => {
    for (const [path, extra, base] of [['/v1/transcribe', {}, 4], ['/v1/translate', { target_language: 'es' }, 5]] as const) {
      const plain = await post(path, { url: SOURCE, ...extra });
      assert.equal(plain.status, 202, plain.text);
      assert.equal(plain.body.credits_charged, base);
      assert.deepEqual([lastParams().diarize, lastParams().num_speakers], [false, null]);
      for (const speakers of [{ diarize: true }, { diarize: true, num_speakers: 3 }, { multichannel: true }]) {
        const before = await h.balance(accountId);
        const res = await post(path, { url: SOURCE, ...extra, ...speakers });
        assert.equal(res.status, 202, res.text);
        assert.equal(res.body.credits_charged, base + 1);
        assert.equal(await h.balance(accountId), before - base - 1);
        assert.equal(lastParams().num_speakers, 'num_speakers' in speakers ? 3 : null);
        assert.equal(lastParams().multichannel, 'multichannel' in speakers);
      }
    }
  });

  it('422 naming num_speakers when it comes without diarize or outside 1–10, multichannel with diarize, and nothing is charged', async () => {
    const before = await h.balance(accountId);
    for (const [body, detail] of [
      [{ num_speakers: 2 }, /num_speakers: labels speakers, so it needs diarize: true/],
      [{ num_speakers: 2, diarize: false }, /needs diarize: true/],
      [{ diarize: true, num_speakers: 0 }, /num_speakers: must be a whole number from 1 to 10/],
      [{ diarize: true, num_speakers: 11 }, /from 1 to 10/],
      [{ diarize: true, num_speakers: 2.5 }, /whole number/],
      [{ diarize: 'yes' }, /diarize: must be true or false/],
      [{ diarize: true, multichannel: true }, /multichannel: labels one speaker per channel, and diarize \(or known_speakers\) tells voices apart in mixed audio: give one of them/],
    ] as const) {
      for (const [path, extra] of [['/v1/transcribe', {}], ['/v1/translate', { target_language: 'es' }]] as const) {
        const res = await post(path, { url: SOURCE, ...extra, ...body });
        assert.equal(res.status, 422, `${path} ${JSON.stringify(body)}: ${res.text}`);
        assert.match(res.body.detail, detail);
        assert.equal(res.body.errors[0].field, 'multichannel' in body ? 'multichannel' : typeof body.diarize === 'string' ? 'diarize' : 'num_speakers');
      }
    }
    assert.equal(await h.balance(accountId), before);
  });

  it('known_speakers: implies diarize (one credit more, num_speakers allowed), at most 4, names distinct and plain, each with one source checked as the source is', async () => {
    const ref = (name: string, over: Record<string, unknown> = {}) => ({ name, url: 'http://127.0.0.1:9/ann.wav', ...over });
    const ok = await post('/v1/transcribe', { url: SOURCE, known_speakers: [ref('Ann')], num_speakers: 2 });
    assert.equal(ok.status, 202, ok.text);
    assert.equal(ok.body.credits_charged, 5);
    assert.deepEqual(lastParams().known_speakers, [ref('Ann')]);
    const before = await h.balance(accountId);
    for (const [body, field, detail] of [
      [{ known_speakers: ['Ann', 'Bob', 'Cy', 'Di', 'Ed'].map((n) => ref(n)) }, 'known_speakers', /at most 4 speakers/],
      [{ known_speakers: [ref('Ann'), ref('ann')] }, 'known_speakers', /names each voice once/],
      [{ known_speakers: [{ name: 'Ann' }] }, 'known_speakers.0.url', /is required \(or upload_id/],
      [{ known_speakers: [ref('<b>Ann</b>')] }, 'known_speakers.0.name', /must not hold control characters, <, > or &/],
      [{ known_speakers: [ref('')] }, 'known_speakers.0.name', /1 to 40 characters/],
      [{ known_speakers: [ref('Ann')], multichannel: true }, 'multichannel', /give one of them/],
      [{ known_speakers: [ref('Ann', { url: 'ftp://x/a.wav' })] }, 'known_speakers.0.url', /http/],
    ] as const) {
      const res = await post('/v1/transcribe', { url: SOURCE, ...body });
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.errors[0].field, field, res.text);
      assert.match(res.body.detail, detail);
    }
    // an uploaded clip was measured when it was received: one outside 2–10 s is refused at once
    const long = path.join(os.tmpdir(), `known-upload-12-${process.pid}.wav`);
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=220:duration=12', '-ar', '16000', '-ac', '1', long]);
    const uploaded = await fetch(`${h.baseUrl}/v1/uploads`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'audio/wav' }, body: fs.readFileSync(long) });
    const uploadId = ((await uploaded.json()) as { upload_id: string }).upload_id;
    const tooLong = await post('/v1/transcribe', { url: SOURCE, known_speakers: [{ name: 'Ann', upload_id: uploadId }] });
    assert.equal(tooLong.status, 422, tooLong.text);
    assert.equal(tooLong.body.errors[0].field, 'known_speakers.0.upload_id');
    assert.match(tooLong.body.detail, /is 12\.0 s long; give 2–10 s/);
    const missing = await post('/v1/transcribe', { url: SOURCE, known_speakers: [{ name: 'Ann', upload_id: 'upl_000000000000000000000000' }] });
    assert.equal(missing.status, 404, missing.text);
    assert.match(missing.body.detail, /^known_speakers\.0\.upload_id: no upload with id upl_0+ in this account/);
    assert.equal(await h.balance(accountId), before, 'refused calls charge nothing');
  });

  it('OpenAI form: known_speaker_names[] with data-URL clips become uploads and known_speakers; each clip checked now, the field named in a 400', async () => {
    const clip = (seconds: number) => {
      const out = path.join(os.tmpdir(), `known-${seconds}-${process.pid}.wav`);
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=220:duration=${seconds}`, '-ar', '16000', '-ac', '1', out]);
      return `data:audio/wav;base64,${fs.readFileSync(out).toString('base64')}`;
    };
    const send = async (fields: [string, string][]) => {
      const form = new FormData();
      form.append('model', 'whisper-1');
      form.append('file', new Blob([fs.readFileSync(path.join(SPEECH_DIR, 'jfk.wav'))]), 'jfk.wav');
      for (const [k, v] of fields) form.append(k, v);
      const res = await fetch(`${h.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form, signal: AbortSignal.timeout(3000) }).catch(() => null);
      return res && { status: res.status, body: (await res.json().catch(() => ({}))) as { error?: { message: string; param: string | null } } };
    };
    for (const [fields, param, message] of [
      [[['response_format', 'diarized_json'], ['known_speaker_names[]', 'Ann']], 'known_speaker_references[]', /one clip per name/],
      [[['response_format', 'diarized_json'], ['known_speaker_names[]', 'Ann'], ['known_speaker_references[]', 'https://x/a.wav']], 'known_speaker_references[0]', /must be a data URL of audio/],
      [[['response_format', 'diarized_json'], ['known_speaker_names[]', 'Ann'], ['known_speaker_references[]', clip(12)]], 'known_speaker_references[0]', /is 12\.0 s long; give 2–10 s/],
      [[['response_format', 'diarized_json'], ['known_speaker_names[]', 'Ann'], ['known_speaker_references[]', `data:text/plain;base64,${Buffer.from('hello there').toString('base64')}`]], 'known_speaker_references[0]', /is not audio or video/],
      [[['response_format', 'json'], ['known_speaker_names[]', 'Ann'], ['known_speaker_references[]', clip(3)]], 'known_speaker_names[]', /set response_format=diarized_json/],
    ] as const) {
      const res = await send(fields as unknown as [string, string][]);
      assert.equal(res?.status, 400, JSON.stringify(res?.body));
      assert.equal(res!.body.error?.param, param);
      assert.match(res!.body.error?.message ?? '', message);
    }
    // accepted: the job names Ann by an upload of the account (the harness runs no workers: the call waits, so it is not awaited)
    const started = h.orchestrator.started.length;
    void send([['response_format', 'diarized_json'], ['known_speaker_names[]', 'Ann'], ['known_speaker_references[]', clip(3)]]);
    await waitFor('the job', async () => (h.orchestrator.started.length > started ? true : undefined), 30_000, 50);
    const params = lastParams() as { known_speakers: { name: string; upload_id: string }[]; diarize: boolean };
    assert.deepEqual(params.known_speakers.map((k) => [k.name, /^upl_/.test(k.upload_id)]), [['Ann', true]]);
  });

  it('the OpenAPI document describes both fields and the cost', async () => {
    const doc = (await h.request('GET', '/v1/openapi.json')).body as { components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> }; paths: Record<string, { post: { description?: string; summary?: string } }> };
    for (const id of ['TranscribeRequest', 'TranslateRequest']) {
      assert.match(doc.components.schemas[id]!.properties.diarize!.description ?? '', /speaker/);
      assert.match(doc.components.schemas[id]!.properties.multichannel!.description ?? '', /channel/);
      assert.ok(doc.components.schemas[id]!.properties.num_speakers, id);
    }
    assert.match(JSON.stringify(doc.paths['/v1/transcribe']), /5 with speaker labels/);
  });
});
