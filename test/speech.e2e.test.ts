import assert from 'node:assert/strict';
import { startServeStack, type ServeStack } from './helpers/serve-stack';
import { assertMonotonic, parseSrtStrict, wordErrorRate } from './helpers/subtitles';
import { EXPECTED, serveSpeechFiles, type SpeechFiles } from './helpers/speech-fixtures';

describe('speech end to end: transcribe and translate through the API (serve, real workers)', function () {
  let media: SpeechFiles;
  let s: ServeStack;

  const api = (method: string, p: string, body?: unknown) => s.api(method, p, body);
  const credits = () => s.credits();
  const waitJob = (jobId: string): Promise<any> => s.waitJob(jobId);

  before(async function () {
    media = await serveSpeechFiles();
    s = await startServeStack({ name: 'speech', plan: 'pro', env: { WHISPER_AUTO_DOWNLOAD: '', WHISPER_MODEL_DIRS: '', HF_HUB_OFFLINE: '1' } });
  });

  after(async () => {
    await s?.stop();
    await media?.close();
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
    assert.deepEqual(job.parameters, { url: media.url('jfk.wav'), language: null, output_format: 'json', word_timestamps: true, model_size: 'base', webhook_url: null });
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
});
