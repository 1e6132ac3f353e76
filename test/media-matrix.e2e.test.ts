import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ENCODINGS, encodingsDir, longFragmentedMp4, PORTRAIT_SPEECH, VIDEO_ENCODINGS, type Encoding } from './helpers/encodings';
import { startMediaOrigin, type MediaOrigin } from './helpers/media-origin';
import { cli } from './helpers/processes';
import { EXPECTED } from './helpers/speech-fixtures';
import { wordErrorRate } from './helpers/subtitles';
import { startServeStack, type JobBody, type ServeStack } from './helpers/serve-stack';

const run = promisify(execFile);

interface Shown {
  width: number;
  height: number;
  codec: string;
  pixFmt: string | undefined;
  duration: number;
}

/** A file as a player sees it, measured by ffprobe alone: the picture turned by its display matrix, pixels made square. */
async function asShown(file: string): Promise<Shown> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file]);
  const p = JSON.parse(stdout) as { format: { duration?: string }; streams: { codec_type: string; codec_name: string; width?: number; height?: number; pix_fmt?: string; sample_aspect_ratio?: string; side_data_list?: { rotation?: number }[]; disposition?: { attached_pic?: number } }[] };
  const v = p.streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  if (!v?.width || !v.height) return { width: 0, height: 0, codec: v?.codec_name ?? 'none', pixFmt: undefined, duration: Number(p.format.duration) };
  const [n, d] = (v.sample_aspect_ratio ?? '1:1').split(':').map(Number);
  const width = Math.round(v.width * (n && d ? n / d : 1));
  const turned = Math.abs(v.side_data_list?.find((x) => x.rotation !== undefined)?.rotation ?? 0) % 180 === 90;
  return { width: turned ? v.height : width, height: turned ? width : v.height, codec: v.codec_name, pixFmt: v.pix_fmt, duration: Number(p.format.duration) };
}

/** The height a picture of `e` takes at `width` displayed pixels. */
const heightAt = (e: Encoding, width: number) => (width * e.display!.height) / e.display!.width;

function near(actual: number, expected: number, within: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= within, `${what}: ${actual}, expected ${expected.toFixed(2)} ± ${within}`);
}

describe('media as people record it: every encoding through every operation, measured as a player sees the outputs', function () {
  this.timeout(1_200_000);
  let s: ServeStack;
  let origin: MediaOrigin;
  let dir: string;
  let work: string;

  before(async function () {
    dir = await encodingsDir();
    origin = await startMediaOrigin(dir);
    s = await startServeStack({ name: 'matrix-e2e', plan: 'enterprise' });
    work = fs.mkdtempSync(path.join(s.dataDir, 'outputs-'));
  });

  after(async () => {
    await s?.stop();
    await origin?.close();
  });

  const source = (e: Encoding) => origin.url('range', e.file);

  async function job(p: string, body: Record<string, unknown>): Promise<JobBody> {
    const res = await s.api('POST', p, body);
    assert.equal(res.status, 202, `${p} ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
    return s.waitJob(res.body.job_id as string, 900_000);
  }

  async function fetched(j: JobBody, what: string, file?: string): Promise<string> {
    assert.equal(j.status, 'completed', `${what}: ${j.status} ${j.error_message ?? ''}`);
    const files = (j as JobBody & { files?: { name: string; url: string }[] }).files ?? [];
    const link = file ? files.find((f) => f.name === file)?.url : j.download_url;
    assert.ok(link, `${what}: no file ${file ?? ''} in ${JSON.stringify(files)}`);
    const res = await fetch(link);
    assert.equal(res.status, 200, what);
    const out = path.join(work, `${what.replace(/[^A-Za-z0-9.-]+/g, '_')}${path.extname(new URL(res.url).pathname) || '.bin'}`);
    fs.writeFileSync(out, Buffer.from(await res.arrayBuffer()));
    return out;
  }

  /** Runs `check` for every encoding at once (the service queues what it cannot run yet); reports every failure, not only the first. */
  async function forEach(encodings: Encoding[], check: (e: Encoding) => Promise<void>): Promise<void> {
    const results = await Promise.allSettled(encodings.map((e) => check(e)));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${encodings[i]!.file}: ${(r.reason as Error).message}`] : []));
    assert.deepEqual(failed, [], `${failed.length} of ${encodings.length} encodings failed:\n${failed.join('\n')}`);
  }

  it('info gives the displayed size and the real duration of every encoding', async () => {
    await forEach(ENCODINGS, async (e) => {
      const res = await s.api('GET', `/v1/info?url=${encodeURIComponent(source(e))}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      near(res.body.duration as number, e.duration, 0.1, 'duration');
      if (!e.display) return;
      const f = (res.body.formats as { width: number | null; height: number | null }[]).find((x) => x.width);
      assert.ok(f, `no format with a picture: ${JSON.stringify(res.body.formats)}`);
      near(f.width!, e.display.width, 2, 'width');
      near(f.height!, e.display.height, 2, 'height');
    });
  });

  it('a thumbnail, GIF, mosaic, storyboard and clip preview of every video are what a player shows, scaled', async () => {
    await forEach(VIDEO_ENCODINGS, async (e) => {
      const url = source(e);
      const [thumb, gif, mosaic, board, clip] = await Promise.all([
        job('/v1/preview', { url, preview_type: 'thumbnail', timestamp: '1', width: 320 }),
        job('/v1/preview', { url, preview_type: 'gif', start: '0.5', duration: 1, fps: 5, width: 160 }),
        job('/v1/preview', { url, preview_type: 'mosaic', columns: 2, rows: 2, width: 480 }),
        job('/v1/preview', { url, preview_type: 'storyboard', width: 80, interval: 1 }),
        job('/v1/preview', { url, preview_type: 'clip', start: '0.5', duration: 1, width: 320 }),
      ]);
      for (const [what, j, width] of [['thumbnail', thumb, 320], ['gif', gif, 160]] as const) {
        const shown = await asShown(await fetched(j, `${e.file}-${what}`));
        assert.deepEqual([j.result_data!.width, j.result_data!.height], [shown.width, shown.height], `${what} result_data is the file's size`);
        near(shown.width, width, 0, `${what} width`);
        near(shown.height, heightAt(e, width), 2, `${what} height`);
      }
      // the sheet: tiles of half its width, two rows of them
      const sheet = await asShown(await fetched(mosaic, `${e.file}-mosaic`));
      near(sheet.width, 480, 0, 'mosaic width');
      near(sheet.height, 2 * heightAt(e, 240), 2, 'mosaic height');
      const sprite = await asShown(await fetched(board, `${e.file}-storyboard`, 'storyboard.jpg'));
      assert.equal(board.result_data!.width, 80, 'storyboard tile width');
      near(board.result_data!.height as number, heightAt(e, 80), 2, 'storyboard tile height');
      assert.equal(sprite.height, (board.result_data!.height as number) * (board.result_data!.rows as number), 'the sprite holds whole tiles');
      const movie = await asShown(await fetched(clip, `${e.file}-clip`));
      assert.deepEqual([movie.codec, movie.pixFmt], ['h264', 'yuv420p'], 'clip codec and pixel format');
      assert.equal(movie.width % 2 + movie.height % 2, 0, `even sides: ${movie.width}×${movie.height}`);
      near(movie.width, 320, 0, 'clip width');
      near(movie.height, heightAt(e, 320), 2, 'clip height');
      near(movie.duration, 1, 0.1, 'clip duration');
    });
  });

  it('a fingerprint of every video; downloads that re-encode are H.264 yuv420p at the displayed size, and copies keep what a player shows', async () => {
    await forEach(VIDEO_ENCODINGS, async (e) => {
      const url = source(e);
      const [print, cut, whole] = await Promise.all([
        job('/v1/fingerprint', { url }),
        job('/v1/download', { url, format: 'mp4', clip_start: '0.5', clip_end: '1.5' }),
        job('/v1/download', { url, format: 'mp4' }),
      ]);
      assert.equal(print.status, 'completed', `fingerprint: ${print.error_message ?? ''}`);
      assert.match(String(print.result_data!.perceptual_hash), /^[0-9a-f]+$/);
      const clipped = await asShown(await fetched(cut, `${e.file}-cut`));
      assert.deepEqual([clipped.codec, clipped.pixFmt], ['h264', 'yuv420p'], 'a clipped download is re-encoded for browsers');
      assert.equal(clipped.width % 2 + clipped.height % 2, 0, `even sides: ${clipped.width}×${clipped.height}`);
      near(clipped.width, e.display!.width, 2, 'clipped width');
      near(clipped.height, e.display!.height, 2, 'clipped height');
      near(clipped.duration, 1, 0.1, 'clipped duration');
      const full = await asShown(await fetched(whole, `${e.file}-whole`));
      near(full.width, e.display!.width, 2, 'download width');
      near(full.height, e.display!.height, 2, 'download height');
      near(full.duration, e.duration, 0.1, 'download duration');
      near(whole.result_data!.duration as number, e.duration, 0.1, 'download result_data.duration');
      // what MP4 carries is copied as it is; anything else is re-encoded for browsers
      const stored = await asShown(path.join(dir, e.file));
      if (['h264', 'hevc', 'av1', 'mpeg4'].includes(stored.codec)) assert.deepEqual([full.codec, full.pixFmt], [stored.codec, stored.pixFmt], 'a copied video');
      else assert.deepEqual([full.codec, full.pixFmt], ['h264', 'yuv420p'], `${stored.codec} re-encoded for browsers`);
    });
  });

  it('every audio encoding gives a waveform, an mp3 and its words; every source with sound gives a waveform of its length', async () => {
    const audio = ENCODINGS.filter((e) => e.hasAudio);
    await forEach(audio, async (e) => {
      const url = source(e);
      const [wave, mp3] = await Promise.all([job('/v1/waveform', { url, format: 'json', points: 100 }), job('/v1/download', { url, format: 'mp3' })]);
      assert.equal(wave.status, 'completed', `waveform: ${wave.error_message ?? ''}`);
      near(wave.result_data!.duration as number, e.duration, 0.1, 'waveform duration');
      const sound = await asShown(await fetched(mp3, `${e.file}-mp3`));
      assert.equal(sound.codec === 'none' || sound.codec === 'mjpeg' || sound.codec === 'png' ? 'mp3' : sound.codec, 'mp3');
      near(sound.duration, e.duration, 0.1, 'mp3 duration');
    });
    const speech = audio.filter((e) => e.speech);
    for (const e of speech) {
      const words = await job('/v1/transcribe', { url: source(e), model_size: 'tiny', language: 'en' });
      assert.equal(words.status, 'completed', `${e.file} transcribe: ${words.error_message ?? ''}`);
      near(words.result_data!.duration as number, e.duration, 0.1, `${e.file} transcription duration`);
      const wer = wordErrorRate(EXPECTED[e.speech!]!.text!, words.result_data!.text as string);
      assert.ok(wer <= 0.2, `${e.file}: word error rate ${(wer * 100).toFixed(1)} %: ${String(words.result_data!.text)}`);
    }
  });

  it('subtitles from speech burnt into a portrait phone video are drawn on the portrait picture, an H.264 yuv420p mp4', async () => {
    const burnt = await job('/v1/download', { url: source(PORTRAIT_SPEECH), format: 'mp4', subtitles: { languages: ['en'], mode: 'burn' } });
    const shown = await asShown(await fetched(burnt, 'portrait-burnt'));
    assert.deepEqual([shown.codec, shown.pixFmt], ['h264', 'yuv420p']);
    near(shown.width, PORTRAIT_SPEECH.display!.width, 2, 'burnt width');
    near(shown.height, PORTRAIT_SPEECH.display!.height, 2, 'burnt height');
    assert.deepEqual(burnt.result_data!.subtitles, [{ language: 'en', source: 'speech' }]);
  });

  it('containers that do not state their length, read from an origin that ignores Range, report their real duration in info and in jobs', async () => {
    const unstated = ['transport.ts', 'fragmented.mp4', 'speech.ogg', 'speech.opus', 'no-duration.mkv'].map((f) => ENCODINGS.find((e) => e.file === f)!);
    await forEach(unstated, async (e) => {
      for (const mode of ['norange', 'range'] as const) {
        const url = origin.url(mode, e.file);
        const info = await s.api('GET', `/v1/info?url=${encodeURIComponent(url)}`);
        assert.equal(info.status, 200, JSON.stringify(info.body));
        near(info.body.duration as number, e.duration, 0.1, `${mode} info duration`);
        const copy = await job('/v1/download', { url });
        assert.equal(copy.status, 'completed', `${mode} download: ${copy.error_message ?? ''}`);
        near(copy.result_data!.duration as number, e.duration, 0.1, `${mode} download result_data.duration`);
        if (!e.hasAudio) continue;
        const wave = await job('/v1/waveform', { url, format: 'json', points: 50 });
        assert.equal(wave.status, 'completed', `${mode} waveform: ${wave.error_message ?? ''}`);
        near(wave.result_data!.duration as number, e.duration, 0.1, `${mode} waveform duration`);
      }
    });
  });

  it('a two-hour fragmented MP4 reports 7,300 s in info, and a free account is still refused it by the plan’s length limit', async () => {
    const long = await longFragmentedMp4(dir);
    for (const mode of ['norange', 'range'] as const) {
      const info = await s.api('GET', `/v1/info?url=${encodeURIComponent(origin.url(mode, long.file))}`);
      assert.equal(info.status, 200, JSON.stringify(info.body));
      near(info.body.duration as number, long.duration, 0.1, `${mode} info duration`);
    }
    const account = (await cli(s.env, 'accounts', 'create', '--name', 'matrix-free', '--plan', 'free')).pop()!;
    const key = (await cli(s.env, 'keys', 'create', '--account', account, '--name', 'free key')).pop()!;
    const res = await fetch(`${s.base}/v1/preview`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: origin.url('norange', long.file), preview_type: 'thumbnail' }) });
    const created = (await res.json()) as { job_id: string };
    assert.equal(res.status, 202, JSON.stringify(created));
    let body: JobBody | undefined;
    for (let i = 0; i < 600 && !['completed', 'failed'].includes(body?.status ?? ''); i++) {
      await new Promise((r) => setTimeout(r, 500));
      body = (await (await fetch(`${s.base}/v1/jobs/${created.job_id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as JobBody;
    }
    assert.equal(body?.status, 'failed', JSON.stringify(body));
    assert.equal(body.failure_kind, 'rejected', body.error_message ?? '');
    assert.match(body.error_message!, /7,?300|2 h|longer than|limit/i);
  });
});
