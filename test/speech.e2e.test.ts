import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { speakerSet, turnAt } from './helpers/speaker-sets';
import { projectRoot } from '../lib/config';
import { ffprobe } from './helpers/media';
import { cli, waitFor } from './helpers/processes';
import { startServeStack, type JobBody, type ServeStack } from './helpers/serve-stack';
import { assertMonotonic, parseSrtStrict, wordErrorRate } from './helpers/subtitles';
import { EXPECTED, SPEECH_DIR, serveSpeechFiles, type SpeechFiles } from './helpers/speech-fixtures';

const execFileP = promisify(execFile);

describe('speech end to end: transcribe and translate through the API (serve, real workers)', function () {
  let media: SpeechFiles;
  let s: ServeStack;
  let longSpeech = '';

  const api = (method: string, p: string, body?: unknown) => s.api(method, p, body);
  const credits = () => s.credits();
  const waitJob = (jobId: string): Promise<any> => s.waitJob(jobId);

  before(async function () {
    longSpeech = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-long-'));
    await execFileP('ffmpeg', ['-v', 'error', '-stream_loop', '13', '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-c:a', 'pcm_s16le', path.join(longSpeech, 'jfk-x14.wav')]);
    media = await serveSpeechFiles(longSpeech);
    s = await startServeStack({ name: 'speech', plan: 'pro', env: { WHISPER_AUTO_DOWNLOAD: '', WHISPER_MODEL_DIRS: '', HF_HUB_OFFLINE: '1', WHISPER_SECTION_SECONDS: '60' } });
  });

  after(async () => {
    await s?.stop();
    await media?.close();
    if (longSpeech) fs.rmSync(longSpeech, { recursive: true, force: true });
  });

  it('GET /v1/languages is free and lists the installed sizes and more than 50 pairs', async () => {
    const before = await credits();
    const res = await api('GET', '/v1/languages');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.transcription.model_sizes, ['tiny', 'base']);
    assert.ok(res.body.transcription.languages.includes('fr'));
    assert.ok(res.body.translation.pair_count > 50, `pairs: ${res.body.translation.pair_count}`);
    assert.ok(res.body.translation.direct_pairs.some((p: any) => p.from === 'en' && p.to === 'es'));
    assert.equal(await credits(), before);
  });

  it('refuses at creation, with 422 and nothing charged: an uninstalled model size, a pair with no path, English-only misuse', async () => {
    const before = await credits();
    const small = await api('POST', '/v1/transcribe', { url: media.url('jfk.wav'), model_size: 'small' });
    assert.equal(small.status, 422);
    assert.match(small.body.detail, /"small" is not installed/);
    assert.match(small.body.detail, /Installed: tiny \(English-only, tiny\.en\), base/);
    const medium = await api('POST', '/v1/translate', { url: media.url('jfk.wav'), target_language: 'es', model_size: 'medium' });
    assert.equal(medium.status, 422);
    assert.match(medium.body.detail, /"medium" is not installed/);
    const noPath = await api('POST', '/v1/translate', { url: media.url('french.aiff'), source_language: 'fr', target_language: 'ja' });
    assert.equal(noPath.status, 422);
    assert.match(noPath.body.detail, /No translation path from "fr" to "ja"/);
    assert.match(noPath.body.detail, /into: .*\ben\b.*\bes\b/);
    const urdu = await api('POST', '/v1/translate', { url: media.url('french.aiff'), source_language: 'fr', target_language: 'ur' });
    assert.equal(urdu.status, 422, 'Urdu is installed (hi→ur) but not reachable from French');
    const tinyFr = await api('POST', '/v1/transcribe', { url: media.url('french.aiff'), model_size: 'tiny' });
    assert.equal(tinyFr.status, 422);
    assert.match(tinyFr.body.detail, /English-only/);
    const badLang = await api('POST', '/v1/transcribe', { url: media.url('jfk.wav'), language: 'xx' });
    assert.equal(badLang.status, 422);
    assert.equal(await credits(), before);
  });

  it('POST /v1/transcribe (4 credits) completes with the JSON file of the contract', async () => {
    const before = await credits();
    const created = await api('POST', '/v1/transcribe', { url: media.url('jfk.wav') });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal(created.body.credits_charged, 4);
    assert.equal(created.body.job_type, 'transcribe');
    const job = await waitJob(created.body.job_id);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    assert.equal(job.progress, 100);
    assert.deepEqual(job.parameters, { url: media.url('jfk.wav'), language: null, output_format: 'json', word_timestamps: true, model_size: 'base', diarize: false, num_speakers: null, known_speakers: [], multichannel: false, webhook_url: null });
    const rd = job.result_data;
    assert.equal(rd.language, 'en');
    assert.equal(rd.output_format, 'json');
    assert.ok(Math.abs(rd.duration - 11) < 0.1);
    assert.ok(rd.realtime_factor > 0);
    const file = await (await fetch(job.download_url)).json() as any;
    assert.equal(file.language, 'en');
    assert.ok(wordErrorRate(EXPECTED['jfk.wav']!.text!, file.text) <= 0.1, file.text);
    assert.equal(rd.segment_count, file.segments.length);
    assert.ok(file.segments[0].words.length > 10);
    assert.equal(await credits(), before - 4);
  });

  it('POST /v1/translate (5 credits) into Spanish gives an SRT of the translation', async () => {
    const before = await credits();
    const created = await api('POST', '/v1/translate', { url: media.url('jfk.wav'), target_language: 'es', output_format: 'srt', model_size: 'tiny', source_language: 'en' });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal(created.body.credits_charged, 5);
    const job = await waitJob(created.body.job_id);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    assert.equal(job.result_data.source_language, 'en');
    assert.equal(job.result_data.target_language, 'es');
    assert.match(job.result_data.translated_text, /país/);
    const res = await fetch(job.download_url);
    const cues = parseSrtStrict(await res.text());
    assertMonotonic(cues);
    assert.match(cues.map((c) => c.text).join(' '), /país/);
    assert.equal(await credits(), before - 5);
  });

  it('a long transcription (decoded in batches, read in sections) reports progress as it goes, and sentence segments with their words', async () => {
    // jfk.wav 14 times over: 154 s, decoded in batches; this stack reads it in sections of about 60 s
    const created = await api('POST', '/v1/transcribe', { url: media.url('jfk-x14.wav'), model_size: 'base' });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const seen = new Set<number>();
    let job: any;
    for (;;) {
      job = (await api('GET', `/v1/jobs/${created.body.job_id}`)).body;
      if (job.status === 'processing' && job.progress > 0 && job.progress < 100) seen.add(job.progress);
      if (job.status === 'completed' || job.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(job.status, 'completed', job.error_message ?? '');
    assert.ok(seen.size >= 3, `progress seen while processing: ${[...seen].join(', ')}`);
    assert.ok(Math.abs(job.result_data.duration - 154) < 0.5, `duration ${job.result_data.duration}`);
    const file = (await (await fetch(job.download_url)).json()) as { text: string; segments: { start: number; end: number; text: string; words: { start: number; end: number; word: string }[] }[] };
    assert.ok(wordErrorRate(Array(14).fill(EXPECTED['jfk.wav']!.text!).join(' '), file.text) <= 0.1, file.text);
    // segments are sentences, as sequential decoding gives them, not the 30 s windows decoded at once
    assert.ok(file.segments.length >= 14, `${file.segments.length} segments`);
    let last = 0;
    for (const seg of file.segments) {
      assert.ok(seg.start >= last - 0.01 && seg.end > seg.start && seg.end - seg.start <= 13, `segment ${JSON.stringify([seg.start, seg.end, seg.text])}`);
      assert.ok(seg.words.length > 0, `a segment without words: ${seg.text}`);
      assert.equal(seg.words.map((w) => w.word).join(' ').replace(/\s+/g, ' '), seg.text.replace(/\s+/g, ' '));
      for (const w of seg.words) assert.ok(w.start >= seg.start - 0.01 && w.end <= seg.end + 0.01, `word ${JSON.stringify(w)} outside ${seg.start}–${seg.end}`);
      last = seg.end;
    }
    // every section's segments are there, at their place in the whole
    assert.ok(last > 150, `the last segment ends at ${last} s of 154`);
  });

  describe('uploads and OpenAI SDK clients on the same stack', function () {
    let freeKey: string;
    let dir: string;
    let video: { file: string; url: string; close: () => Promise<void> };
    const JFK = path.join(SPEECH_DIR, 'jfk.wav');
    const FRENCH = path.join(SPEECH_DIR, 'french.aiff');

    before(async function () {
      const freeAccount = (await cli(s.env, 'accounts', 'create', '--name', 'openai-free', '--plan', 'free')).pop()!;
      freeKey = (await cli(s.env, 'keys', 'create', '--account', freeAccount, '--name', 'free key')).pop()!;
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openai-e2e-'));
      // a short video with the JFK recording as its sound, served whole by a plain origin
      const file = path.join(dir, 'jfk-video.mp4');
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-i', JFK, '-t', '6', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', file]);
      const server = http.createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': fs.statSync(file).size });
        if (req.method === 'HEAD') res.end();
        else fs.createReadStream(file).pipe(res);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      video = { file, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jfk-video.mp4`, close: () => new Promise((r) => server.close(() => r())) };
    });

    after(async () => {
      await video?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    const upload = async (file: string, type: string): Promise<string> => {
      const res = await fetch(`${s.base}/v1/uploads`, { method: 'POST', headers: { authorization: `Bearer ${s.key}`, 'content-type': type, 'content-disposition': `attachment; filename="${path.basename(file)}"` }, body: fs.readFileSync(file) });
      const body = (await res.json()) as any;
      assert.equal(res.status, 201, JSON.stringify(body));
      return body.upload_id as string;
    };
    const run = async (p: string, body: Record<string, unknown>): Promise<JobBody> => {
      const created = await s.api('POST', p, body);
      assert.equal(created.status, 202, JSON.stringify(created.body));
      const job = await s.waitJob(created.body.job_id);
      assert.equal(job.status, 'completed', `${p} ${JSON.stringify(body)}: ${job.error_message}`);
      return job;
    };
    const bytes = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

    it('an upload used by a download, a preview and a transcription gives the same outputs as the same file by URL', async () => {
      const videoId = await upload(video.file, 'video/mp4');
      const audioId = await upload(JFK, 'audio/wav');
      const thumbs = await Promise.all([{ upload_id: videoId }, { url: video.url }].map((src) => run('/v1/preview', { ...src, preview_type: 'thumbnail', timestamp: 2, width: 160 })));
      assert.deepEqual(await bytes(thumbs[0]!.download_url!), await bytes(thumbs[1]!.download_url!), 'the same thumbnail, byte for byte');
      const downloads = await Promise.all([{ upload_id: videoId }, { url: video.url }].map((src) => run('/v1/download', { ...src, format: 'mp4', clip_start: 1, clip_end: 4 })));
      const probes = await Promise.all(downloads.map(async (j) => {
        const out = path.join(dir, `${j.job_id}.mp4`);
        fs.writeFileSync(out, await bytes(j.download_url!));
        return ffprobe(out);
      }));
      assert.deepEqual(probes.map((p) => p.streams.map((x: any) => [x.codec_type, x.codec_name, x.width ?? null])), [probes[1]!.streams.map((x: any) => [x.codec_type, x.codec_name, x.width ?? null]), probes[1]!.streams.map((x: any) => [x.codec_type, x.codec_name, x.width ?? null])]);
      assert.ok(Math.abs(Number(probes[0]!.format.duration) - Number(probes[1]!.format.duration)) < 0.1, `${probes[0]!.format.duration} vs ${probes[1]!.format.duration}`);
      const speech = await Promise.all([{ upload_id: audioId }, { url: media.url('jfk.wav') }].map((src) => run('/v1/transcribe', { ...src, model_size: 'tiny', language: 'en' })));
      assert.equal(speech[0]!.result_data!.text, speech[1]!.result_data!.text);
      assert.equal(speech[0]!.parameters.upload_id, audioId);
    });

    it('the official openai Node SDK: every response_format, word timestamps, streaming, translations, and its typed errors', async () => {
      const client = new OpenAI({ apiKey: s.key, baseURL: `${s.base}/v1`, maxRetries: 0 });
      const before = await s.credits();
      const json = await client.audio.transcriptions.create({ file: fs.createReadStream(JFK), model: 'whisper-1' });
      assert.ok(wordErrorRate(EXPECTED['jfk.wav']!.text!, json.text) <= 0.1, json.text);
      assert.equal(await s.credits(), before - 4, 'charged as one transcribe job');
      const verbose = await client.audio.transcriptions.create({ file: fs.createReadStream(JFK), model: 'tiny.en', response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] });
      assert.equal(verbose.language, 'english');
      assert.ok(Math.abs(verbose.duration - 11) < 0.2, String(verbose.duration));
      assert.ok(verbose.words!.length > 15, JSON.stringify(verbose.words));
      assert.ok(verbose.words!.every((w, i, a) => w.end >= w.start && (i === 0 || w.start >= a[i - 1]!.start)));
      for (const seg of verbose.segments!) {
        assert.deepEqual(Object.keys(seg).sort(), ['avg_logprob', 'compression_ratio', 'end', 'id', 'no_speech_prob', 'seek', 'start', 'temperature', 'text', 'tokens']);
        assert.ok(seg.tokens.length > 0 && seg.avg_logprob < 0 && seg.no_speech_prob >= 0 && seg.no_speech_prob <= 1, JSON.stringify(seg));
      }
      const text = await fetch(`${s.base}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${s.key}` }, body: form({ model: 'tiny.en', response_format: 'text' }, JFK) });
      const textBody = await text.text();
      assert.equal(text.headers.get('content-type'), 'text/plain; charset=utf-8', `${text.status}: ${textBody}`);
      assert.match(textBody, /country/);
      const srt = await client.audio.transcriptions.create({ file: fs.createReadStream(JFK), model: 'tiny.en', response_format: 'srt' });
      assertMonotonic(parseSrtStrict(srt as unknown as string));
      const vtt = await client.audio.transcriptions.create({ file: fs.createReadStream(JFK), model: 'tiny.en', response_format: 'vtt' });
      assert.match(vtt as unknown as string, /^WEBVTT\n\n[\s\S]*-->/);
      // six minutes of speech: segments stream while the job is still processing (two minutes took tiny.en 2.6 s
      // here, too short for a segment to reach the client first)
      const long = path.join(dir, 'jfk-long.wav');
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-stream_loop', '32', '-i', JFK, '-c', 'copy', long]);
      const { data: stream, response } = await client.audio.transcriptions.create({ file: fs.createReadStream(long), model: 'tiny.en', stream: true }).withResponse();
      const streamedJob = response.headers.get('mediasvc-job-id')!;
      const events: any[] = [];
      let statusAtFirstDelta: string | null = null;
      let firstAt = '';
      for await (const e of stream) {
        events.push(e);
        if (events.length === 1) {
          firstAt = new Date().toISOString();
          statusAtFirstDelta = (await s.api('GET', `/v1/jobs/${streamedJob}`)).body.status;
        }
      }
      assert.ok(events.length > 10, JSON.stringify(events));
      assert.ok(events.slice(0, -1).every((e) => e.type === 'transcript.text.delta'));
      assert.equal(events.at(-1).type, 'transcript.text.done');
      assert.equal(events.slice(0, -1).map((e) => e.delta).join(''), events.at(-1).text);
      assert.equal((events.at(-1).text.match(/country/g) ?? []).length >= 10, true, events.at(-1).text);
      const streamed = (await s.api('GET', `/v1/jobs/${streamedJob}`)).body;
      assert.equal(statusAtFirstDelta, 'processing', `the first segment came while the job was still recognising (job created ${streamed.created_at}, first segment ${firstAt}, completed ${streamed.completed_at})`);
      const english = await client.audio.translations.create({ file: fs.createReadStream(FRENCH), model: 'base' });
      assert.ok(english.text.length > 10, english.text);
      // the extensions: a target other than English, and a URL in place of the file
      const spanish = await client.audio.translations.create({ file: fs.createReadStream(JFK), model: 'tiny.en', language: 'es' } as any);
      assert.match(spanish.text, /país/);
      const byUrl = await fetch(`${s.base}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${s.key}` }, body: form({ model: 'tiny.en', url: media.url('jfk.wav') }) });
      const byUrlBody = (await byUrl.json()) as any;
      assert.equal(byUrl.status, 200, JSON.stringify(byUrlBody));
      assert.match(byUrlBody.text, /country/);
      assert.match(byUrl.headers.get('mediasvc-job-id') ?? '', /^[0-9a-f-]{36}$/);
      const listed = await s.api('GET', `/v1/jobs/${byUrl.headers.get('mediasvc-job-id')}`);
      assert.equal(listed.body.source_url, media.url('jfk.wav'));

      // a client that goes away once its job exists: the job runs on, charged once
      const beforeAbort = await s.credits();
      const newest = async () => (await s.api('GET', '/v1/jobs?job_type=transcribe&limit=1')).body.items[0]?.job_id as string | undefined;
      const last = await newest();
      const abort = new AbortController();
      const call = client.audio.transcriptions.create({ file: fs.createReadStream(long), model: 'tiny.en' }, { signal: abort.signal }).catch((err: unknown) => err);
      const abandoned = await waitFor('the abandoned call\'s job', async () => {
        const id = await newest();
        return id && id !== last ? id : undefined;
      });
      abort.abort();
      assert.ok((await call) instanceof OpenAI.APIUserAbortError);
      const finished = await s.waitJob(abandoned);
      assert.equal(finished.status, 'completed', finished.error_message ?? '');
      assert.equal(await s.credits(), beforeAbort - 4, 'charged once, not refunded, nothing more');

      await assert.rejects(new OpenAI({ apiKey: `vc_${'0'.repeat(40)}`, baseURL: `${s.base}/v1`, maxRetries: 0 }).audio.transcriptions.create({ file: fs.createReadStream(JFK), model: 'tiny.en' }), (err) => err instanceof OpenAI.AuthenticationError);
      await assert.rejects(client.audio.transcriptions.create({ file: fs.createReadStream(JFK), model: 'tiny.en', response_format: 'xml' as any }), (err: any) => {
        assert.ok(err instanceof OpenAI.BadRequestError, String(err));
        assert.equal(err.param, 'response_format');
        assert.equal(err.type, 'invalid_request_error');
        return true;
      });
      await assert.rejects(client.audio.transcriptions.create({ file: fs.createReadStream(JFK), model: 'large-v3' }), (err: any) => err instanceof OpenAI.BadRequestError && /not installed here/.test(err.message));
      const free = new OpenAI({ apiKey: freeKey, baseURL: `${s.base}/v1`, maxRetries: 0 });
      let limited: unknown = null;
      for (let i = 0; i < 30 && !limited; i++) {
        await free.audio.transcriptions.create({ file: new File([], 'empty.wav'), model: 'tiny' }).catch((err: unknown) => {
          if (err instanceof OpenAI.RateLimitError) limited = err;
          else assert.ok(err instanceof OpenAI.APIError && err.status === 415, String(err));
        });
      }
      assert.ok(limited instanceof OpenAI.RateLimitError, 'a spent minute raises RateLimitError');
    });

    it('the official openai Python SDK: formats, words, streaming, translations, and AuthenticationError, BadRequestError, RateLimitError', async () => {
      const python = path.join(projectRoot, '.venv/bin/python');
      // a conversation of the speaker labels' test set: two men's voices made from recordings (flite's awb and rms)
      const { conversations, references } = await speakerSet(python, 'test', ['flite-awb']);
      const talk = conversations.find((c) => c.name === 'test-awb-rms')!;
      const annClip = references['flite-awb']!;
      const { stdout } = await execFileP(python, [path.join(projectRoot, 'test/clients/openai_audio.py'), `${s.base}/v1`, s.key, freeKey, JFK, talk.file, annClip], { maxBuffer: 16 * 1024 * 1024 });
      const out = JSON.parse(stdout);
      assert.match(out.json, /country/);
      assert.equal(out.verbose.language, 'english');
      assert.ok(out.verbose.words.length > 15);
      assert.ok(out.verbose.segments[0].tokens.length > 0);
      assert.match(out.text, /country/);
      assertMonotonic(parseSrtStrict(out.srt));
      assert.match(out.vtt, /^WEBVTT/);
      assert.equal(out.stream.at(-1).type, 'transcript.text.done');
      assert.ok(out.stream.slice(0, -1).every((e: any) => e.type === 'transcript.text.delta'));
      assert.match(out.translation, /country/i);
      assert.equal(out.bad_key?.type, 'AuthenticationError', JSON.stringify(out.bad_key));
      assert.equal(out.bad_format?.type, 'BadRequestError', JSON.stringify(out.bad_format));
      assert.equal(out.bad_format.body.param, 'response_format');
      assert.equal(out.rate_limited?.type, 'RateLimitError', JSON.stringify(out.rate_limited));
      // diarized_json (gpt-4o-transcribe-diarize): segments of two speakers, lettered in order of first speech, on the voice speaking
      type Diarized = { type: string; id: string; start: number; end: number; text: string; speaker: string };
      const segments = out.diarized.segments as Diarized[];
      assert.deepEqual([out.diarized.task, [...new Set(segments.map((x) => x.speaker))]], ['transcribe', ['A', 'B']]);
      assert.ok(segments.every((x) => x.type === 'transcript.text.segment' && /^seg_\d+$/.test(x.id)), JSON.stringify(segments[0]));
      const first = talk.turns[0]!.speaker;
      const right = segments.filter((x) => (x.speaker === 'A' ? first : 1 - first) === turnAt(talk, (x.start + x.end) / 2).speaker).length;
      console.log(`      diarized_json through the openai SDK, ${talk.name}: ${right} of ${segments.length} segments on the voice speaking`);
      assert.ok(right / segments.length >= 0.9, `${right} of ${segments.length} segments on the voice speaking`);
      const events = out.diarized_stream as Diarized[];
      assert.equal(events.at(-1)!.type, 'transcript.text.done');
      assert.deepEqual(events.slice(0, -1).map((e) => [e.type, e.speaker, e.text]), segments.map((x) => [x.type, x.speaker, x.text]));
      // known_speaker_names[] with a reference clip as a data URL: the first voice is Ann, the other keeps a letter
      const known = out.known.segments as Diarized[];
      assert.deepEqual([...new Set(known.map((x) => x.speaker))], ['Ann', 'A']);
      const named = known.filter((x) => (x.speaker === 'Ann') === (turnAt(talk, (x.start + x.end) / 2).voice === 'flite-awb')).length;
      console.log(`      known speaker "Ann" (flite-awb's reference) through the openai SDK: ${named} of ${known.length} segments on the voice speaking`);
      assert.ok(named / known.length >= 0.9, `${named} of ${known.length} segments on the voice speaking`);
    });
  });
});

function form(fields: Record<string, string>, file?: string): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  if (file) f.append('file', new Blob([fs.readFileSync(file)]), path.basename(file));
  return f;
}
