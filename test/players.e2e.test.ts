import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { WebVTTParser } from 'webvtt-parser';
import { sendFile, startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { YTDLP_PLUGIN_DIR } from './helpers/ytdlp-comments-fixture';
import { parseSrtStrict, wordErrorRate } from './helpers/subtitles';
import { EXPECTED, SPEECH_DIR } from './helpers/speech-fixtures';
import { startServeStack, type JobBody, type ServeStack } from './helpers/serve-stack';

const run = promisify(execFile);

/** A chapter as ffprobe reports it, in seconds. */
interface ProbedChapter {
  title: string;
  start: number;
  end: number;
}

async function probeChapters(file: string): Promise<ProbedChapter[]> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_chapters', file]);
  const chapters = (JSON.parse(stdout) as { chapters: { start_time: string; end_time: string; tags?: { title?: string } }[] }).chapters;
  return chapters.map((c) => ({ title: c.tags?.title ?? '', start: Number(c.start_time), end: Number(c.end_time) }));
}

/** Chapters published by the fixture platform (and written into the direct MKV): 12 s of video in three parts. */
const CHAPTERS = [
  { title: 'Opening', start_time: 0, end_time: 3.5 },
  { title: 'The middle — ünïcode', start_time: 3.5, end_time: 8 },
  { title: 'Closing', start_time: 8, end_time: 12 },
];

const near = (a: number, b: number, tol = 0.05) => Math.abs(a - b) <= tol;

/** English subtitles: odd timings (kept to the millisecond), a two-line cue, markup. */
const SRT = `1
00:00:00,250 --> 00:00:02,125
The house is big.

2
00:00:02,125 --> 00:00:04,999
I have a red car.
<i>Good morning, everyone.</i>

3
00:01:05,010 --> 00:01:07,500
The house is big.
`;

/** The same cues as WebVTT, with voices, a NOTE and cue settings. */
const VTT = `WEBVTT

NOTE written by hand

00:00.250 --> 00:02.125 align:start
<v Ann>The house is big.</v>

00:02.125 --> 00:04.999
<v Bob>I have a red car.
Good morning, everyone.</v>

01:05.010 --> 01:07.500
The house is big.
`;

/** German subtitles of the 12 s talk, as an HTML5 page's <track> links them. */
const GERMAN_VTT = `WEBVTT

00:00:00.500 --> 00:00:03.000
Guten Tag und willkommen.

00:00:04.000 --> 00:00:07.250
Das Haus ist groß.
Ich habe ein rotes Auto.

00:00:09.000 --> 00:00:11.500
Auf Wiedersehen.
`;

/** A page whose HTML5 video has a German <track>. */
const trackPage = (video: string) => `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>A talk with German subtitles</title></head>
<body><h1>A talk with German subtitles</h1>
<video controls width="854" height="480"><source src="${video}" type="video/mp4">
<track kind="subtitles" srclang="de" label="Deutsch" src="/players/talk.de.vtt"></video>
</body></html>
`;

/** A file's subtitle streams as ffprobe reports them. */
async function subtitleStreams(file: string): Promise<{ codec: string; language: string | undefined; title: string | undefined }[]> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', '-select_streams', 's', file]);
  return (JSON.parse(stdout) as { streams: { codec_name: string; tags?: Record<string, string> }[] }).streams.map((st) => ({
    codec: st.codec_name,
    language: st.tags?.language ?? st.tags?.LANGUAGE,
    title: st.tags?.title ?? st.tags?.handler_name,
  }));
}

/**
 * The cues of a file's nth subtitle stream, extracted with ffmpeg as SubRip and parsed, timed from the
 * start of its video (a muxer may start the whole file a few milliseconds late, for an audio codec's
 * priming, and so the cues with it).
 */
async function trackCues(file: string, n: number) {
  const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', file, '-map', `0:s:${n}`, '-f', 'srt', '-']);
  const probe = JSON.parse((await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', '-select_streams', 'v:0', file])).stdout) as { streams: { start_time?: string }[] };
  const offset = Number(probe.streams[0]?.start_time ?? 0);
  // ffmpeg ends a line inside a cue with CRLF, and the file with a blank line
  const cues = parseSrtStrict(stdout.replace(/\r/g, '').replace(/\n+$/, '\n'));
  return cues.map((c) => ({ ...c, start: Math.round((c.start - offset) * 1000) / 1000, end: Math.round((c.end - offset) * 1000) / 1000 }));
}

const TIMINGS = [
  [0.25, 2.125],
  [2.125, 4.999],
  [65.01, 67.5],
];

describe('ready for players end to end: jobs with several files, storyboards, chapters', function () {
  let fx: FixturePlatform;
  let s: ServeStack;
  let media: string;

  async function create(p: string, body: Record<string, unknown>): Promise<string> {
    const res = await s.api('POST', p, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.job_id as string;
  }

  async function completed(p: string, body: Record<string, unknown>): Promise<JobBody & { files: { name: string; content_type: string; size: number | null; url: string }[] }> {
    const job = await s.waitJob(await create(p, body));
    assert.equal(job.status, 'completed', job.error_message ?? '');
    return job as JobBody & { files: { name: string; content_type: string; size: number | null; url: string }[] };
  }

  async function completedOrFailed(p: string, body: Record<string, unknown>): Promise<JobBody> {
    return s.waitJob(await create(p, body));
  }

  async function fetchTo(url: string, name: string): Promise<string> {
    const res = await fetch(url);
    assert.equal(res.status, 200, `${url}: ${res.status}`);
    const file = path.join(s.dataDir, name);
    fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  before(async function () {
    media = fs.mkdtempSync(path.join(os.tmpdir(), 'players-media-'));
    // 12 s of 480p with a tone; the same as MKV with the chapters in its container
    const plain = path.join(media, 'talk.mp4');
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=854x480:r=25:d=12', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=12', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-c:a', 'aac', '-shortest', '-y', plain]);
    const meta = path.join(media, 'chapters.txt');
    fs.writeFileSync(meta, `;FFMETADATA1\n${CHAPTERS.map((c) => `[CHAPTER]\nTIMEBASE=1/1000\nSTART=${c.start_time * 1000}\nEND=${c.end_time * 1000}\ntitle=${c.title}\n`).join('')}`);
    await run('ffmpeg', ['-v', 'error', '-i', plain, '-i', meta, '-map', '0', '-map_chapters', '1', '-c', 'copy', '-y', path.join(media, 'chaptered.mkv')]);
    fs.writeFileSync(path.join(media, 'talk.en.srt'), SRT);
    fs.writeFileSync(path.join(media, 'talk.de.vtt'), GERMAN_VTT);
    // 11 s of speech (jfk.wav) with a moving picture
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=640x360:r=25', '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-map', '0:v', '-map', '1:a', '-shortest', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-y', path.join(media, 'speech.mp4')]);
    // a subtitle file under a name that does not say so (and a wrong content type)
    fs.writeFileSync(path.join(media, 'notes'), SRT);
    fx = await startFixturePlatform({
      extraRoutes: (req, res, pathname) => {
        const file = /^\/players\/(talk\.mp4|chaptered\.mkv|talk\.en\.srt|notes|talk\.de\.vtt|speech\.mp4)$/.exec(pathname);
        if (file) {
          sendFile(req, res, path.join(media, file[1]!)).catch(() => res.destroy());
          return true;
        }
        if (pathname === '/players/subtitled' || pathname === '/players/subtitled-speech') {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(trackPage(pathname === '/players/subtitled' ? '/players/talk.mp4' : '/players/speech.mp4'));
          return true;
        }
        if (pathname === '/chaptered/watch/trip') {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>trip</title><p>watch page</p>');
          return true;
        }
        if (pathname === '/chaptered/api/trip') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ title: 'A trip in three parts', duration: 12, media: '/players/talk.mp4', width: 854, height: 480, chapters: CHAPTERS }));
          return true;
        }
        return false;
      },
    });
    s = await startServeStack({ name: 'players-e2e', plan: 'business', env: { YTDLP_PLUGIN_DIRS: YTDLP_PLUGIN_DIR } });
  });

  after(async () => {
    await s?.stop();
    await fx?.close();
    if (media) fs.rmSync(media, { recursive: true, force: true });
  });

  describe('storyboards', function () {
    /** Checks a storyboard as a player reads it: the WebVTT (a spec parser), the sprite it links, and Mux's JSON. */
    async function checkStoryboard(job: Awaited<ReturnType<typeof completed>>, expect: { tiles: number; columns: number; duration: number }) {
      assert.deepEqual(
        job.files.map((f) => [f.name, f.content_type]),
        [
          ['storyboard.vtt', 'text/vtt'],
          ['storyboard.jpg', 'image/jpeg'],
          ['storyboard.json', 'application/json'],
        ],
      );
      assert.equal(job.files[0]!.url, job.download_url, 'the first file is the one download_url serves');
      for (const f of job.files) assert.ok(typeof f.size === 'number' && f.size > 0, JSON.stringify(f));
      const sprite = job.files[1]!;

      const vttRes = await fetch(job.download_url!);
      assert.equal(vttRes.status, 200);
      assert.match(vttRes.headers.get('content-type') ?? '', /^text\/vtt/);
      const vtt = await vttRes.text();
      // the same file under its own name
      assert.equal(await (await fetch(job.files[0]!.url.replace(/\/?$/, '') + '/storyboard.vtt')).text(), vtt);
      const parsed = new WebVTTParser().parse(vtt, 'metadata');
      assert.deepEqual(parsed.errors, [], vtt.slice(0, 400));
      assert.equal(parsed.cues.length, expect.tiles);
      const image = await sharp(await fetchTo(sprite.url, `${job.job_id}.jpg`)).metadata();
      const tiles = parsed.cues.map((cue, i) => {
        const m = /^(.*)#xywh=(\d+),(\d+),(\d+),(\d+)$/.exec(cue.text);
        assert.ok(m, `cue ${i}: ${cue.text}`);
        // each cue links the sprite itself: a player fetches it from there
        assert.equal(m[1], sprite.url, `cue ${i} links ${m[1]}`);
        return { start: cue.startTime, end: cue.endTime, x: Number(m[2]), y: Number(m[3]), w: Number(m[4]), h: Number(m[5]) };
      });
      // cues run back to back from 0 to the duration
      assert.equal(tiles[0]!.start, 0);
      for (let i = 1; i < tiles.length; i++) assert.equal(tiles[i]!.start, tiles[i - 1]!.end, `cue ${i} starts where cue ${i - 1} ends`);
      assert.ok(near(tiles.at(-1)!.end, expect.duration, 0.1), `the last cue ends at ${tiles.at(-1)!.end}`);
      // every tile the same size, inside the sprite, none overlapping, in a grid of `columns` that fills the sprite exactly
      const { w, h } = tiles[0]!;
      const rows = Math.ceil(expect.tiles / expect.columns);
      assert.equal(image.width, expect.columns * w, `sprite ${image.width}×${image.height}, tile ${w}×${h}`);
      assert.equal(image.height, rows * h);
      tiles.forEach((t, i) => {
        assert.deepEqual([t.w, t.h, t.x, t.y], [w, h, (i % expect.columns) * w, Math.floor(i / expect.columns) * h], `tile ${i}`);
      });
      // the tiles show different frames of the moving test pattern
      const crop = (t: (typeof tiles)[number]) => sharp(path.join(s.dataDir, `${job.job_id}.jpg`)).extract({ left: t.x, top: t.y, width: t.w, height: t.h }).raw().toBuffer();
      assert.notDeepEqual(await crop(tiles[0]!), await crop(tiles.at(-1)!));

      const json = JSON.parse(await (await fetch(job.files[2]!.url)).text()) as { url: string; tile_width: number; tile_height: number; duration: number; tiles: { start: number; x: number; y: number }[] };
      assert.equal(json.url, sprite.url);
      assert.deepEqual([json.tile_width, json.tile_height], [w, h]);
      assert.ok(near(json.duration, expect.duration, 0.1));
      assert.deepEqual(json.tiles, tiles.map((t) => ({ start: t.start, x: t.x, y: t.y })));
      return { tile: { w, h }, image };
    }

    it('a storyboard with the defaults: a tile a second, 160 px wide, one row of the four; three files, 1 credit', async () => {
      const before = await s.credits();
      const job = await completed('/v1/preview', { url: fx.url('/media/v720.mp4'), preview_type: 'storyboard' });
      assert.equal(job.credits_charged, 1);
      assert.equal(await s.credits(), before - 1);
      const { tile } = await checkStoryboard(job, { tiles: 4, columns: 4, duration: 4 });
      assert.deepEqual([tile.w, tile.h], [160, 90]);
      assert.deepEqual(
        { tiles: job.result_data!.tiles, interval: job.result_data!.interval, columns: job.result_data!.columns, rows: job.result_data!.rows, sprite: job.result_data!.sprite, width: job.result_data!.width, height: job.result_data!.height },
        { tiles: 4, interval: 1, columns: 4, rows: 1, sprite: 'storyboard.jpg', width: 160, height: 90 },
      );
    });

    it('a storyboard with its interval, width and columns: a partly filled last row, tiles still exactly in the grid', async () => {
      const job = await completed('/v1/preview', { url: fx.url('/players/talk.mp4'), preview_type: 'storyboard', interval: 1.5, width: 120, columns: 3 });
      await checkStoryboard(job, { tiles: 8, columns: 3, duration: 12 });
      assert.equal(job.result_data!.rows, 3);
    });

    it('a storyboard field out of range is a 422 naming it', async () => {
      for (const [body, field] of [
        [{ interval: 0 }, 'interval'],
        [{ width: 2000 }, 'width'],
        [{ columns: 50 }, 'columns'],
      ] as const) {
        const res = await s.api('POST', '/v1/preview', { url: fx.url('/media/v720.mp4'), preview_type: 'storyboard', ...body });
        assert.equal(res.status, 422, JSON.stringify(res.body));
        assert.ok(JSON.stringify(res.body).includes(field), JSON.stringify(res.body));
      }
    });
  });

  describe('subtitle files translated', function () {
    it('an SRT file by URL: each cue translated line by line, every timing kept exactly, for 1 credit', async () => {
      const before = await s.credits();
      const job = await completed('/v1/translate', { url: fx.url('/players/talk.en.srt'), source_language: 'en', target_language: 'es', output_format: 'srt' });
      assert.equal(job.credits_charged, 1);
      assert.equal(await s.credits(), before - 1);
      assert.equal(job.parameters.source_type, 'subtitles');
      const srt = await (await fetch(job.download_url!)).text();
      const cues = parseSrtStrict(srt);
      assert.deepEqual(cues.map((c) => [c.start, c.end]), TIMINGS);
      assert.deepEqual(cues.map((c) => c.text), ['La casa es grande.', 'Tengo un coche rojo.\nBuenos días, todo el mundo.', 'La casa es grande.']);
      assert.equal(job.result_data!.segment_count, 3);
      assert.equal(job.result_data!.source_format, 'srt');
      assert.deepEqual(job.result_data!.translation_route, ['en', 'es']);
    });

    it('a WebVTT upload: voices kept, JSON and VTT out; a subtitle file by another name needs source_type', async () => {
      const res = await fetch(`${s.base}/v1/uploads`, { method: 'POST', headers: { authorization: `Bearer ${s.key}`, 'content-type': 'text/vtt', 'content-disposition': 'attachment; filename="talk.vtt"' }, body: VTT });
      assert.equal(res.status, 201, await res.clone().text());
      const upload = (await res.json()) as { upload_id: string; content_type: string };
      assert.equal(upload.content_type, 'text/vtt');
      const job = await completed('/v1/translate', { upload_id: upload.upload_id, source_language: 'en', target_language: 'es', output_format: 'vtt' });
      assert.equal(job.credits_charged, 1);
      const vtt = await (await fetch(job.download_url!)).text();
      const parsed = new WebVTTParser().parse(vtt, 'metadata');
      assert.deepEqual(parsed.errors, []);
      assert.deepEqual(parsed.cues.map((c) => [c.startTime, c.endTime]), TIMINGS);
      assert.deepEqual(parsed.cues.map((c) => c.text), ['<v Ann>La casa es grande.</v>', '<v Bob>Tengo un coche rojo.\nBuenos días, todo el mundo.</v>', 'La casa es grande.']);

      // no extension: priced and run as speech unless it says what it is
      const asMedia = await s.api('POST', '/v1/translate', { url: fx.url('/players/notes'), source_language: 'en', target_language: 'es' });
      assert.equal(asMedia.status, 202);
      assert.equal(asMedia.body.credits_charged, 5);
      const json = await completed('/v1/translate', { url: fx.url('/players/notes'), source_type: 'subtitles', source_language: 'en', target_language: 'es', output_format: 'json' });
      const out = JSON.parse(await (await fetch(json.download_url!)).text()) as { segments: { start: number; end: number; original: string; text: string }[] };
      assert.deepEqual(out.segments.map((x) => [x.start, x.end]), TIMINGS);
      assert.equal(out.segments[0]!.original, 'The house is big.');
      assert.equal(out.segments[0]!.text, 'La casa es grande.');
    });

    it('a subtitle file needs source_language, and has no speakers to label: 422s that say so', async () => {
      const noLanguage = await s.api('POST', '/v1/translate', { url: fx.url('/players/talk.en.srt'), target_language: 'es' });
      assert.equal(noLanguage.status, 422, JSON.stringify(noLanguage.body));
      assert.match(JSON.stringify(noLanguage.body), /source_language is needed to translate a subtitle file/);
      const speakers = await s.api('POST', '/v1/translate', { url: fx.url('/players/talk.en.srt'), source_language: 'en', target_language: 'es', diarize: true });
      assert.equal(speakers.status, 422, JSON.stringify(speakers.body));
      assert.match(JSON.stringify(speakers.body), /speaker labels need speech/);
      const noPath = await s.api('POST', '/v1/translate', { url: fx.url('/players/talk.en.srt'), source_language: 'en', target_language: 'ja' });
      assert.equal(noPath.status, 422, JSON.stringify(noPath.body));
    });
  });

  describe('subtitles in downloads', function () {
    it("a page's HTML5 <track>: listed by info, embedded as given in mp4, mkv and webm, tagged German, for 1 credit", async () => {
      const info = await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/players/subtitled'))}`);
      assert.equal(info.status, 200, JSON.stringify(info.body));
      assert.deepEqual(info.body.subtitles, ['de']);
      const expected = [
        { start: 0.5, end: 3, text: 'Guten Tag und willkommen.' },
        { start: 4, end: 7.25, text: 'Das Haus ist groß.\nIch habe ein rotes Auto.' },
        { start: 9, end: 11.5, text: 'Auf Wiedersehen.' },
      ];
      for (const [format, codec] of [
        ['mp4', 'mov_text'],
        ['mkv', 'subrip'],
        ['webm', 'webvtt'],
      ] as const) {
        const before = await s.credits();
        const job = await completed('/v1/download', { url: fx.url('/players/subtitled'), format, subtitles: { languages: ['de'], source: 'platform' } });
        assert.equal(job.credits_charged, 1, format);
        assert.equal(await s.credits(), before - 1);
        assert.deepEqual(job.result_data!.subtitles, [{ language: 'de', source: 'platform' }]);
        const file = await fetchTo(job.download_url!, `track.${format}`);
        const streams = await subtitleStreams(file);
        assert.equal(streams.length, 1, JSON.stringify(streams));
        assert.equal(streams[0]!.codec, codec, format);
        assert.equal(streams[0]!.language, 'ger', `${format}: ${JSON.stringify(streams)}`);
        const cues = await trackCues(file, 0);
        assert.deepEqual(cues.map((c) => c.text), expected.map((c) => c.text), format);
        cues.forEach((c, i) => assert.ok(near(c.start, expected[i]!.start, 0.002) && near(c.end, expected[i]!.end, 0.002), `${format} cue ${i}: ${JSON.stringify(c)}`));
      }
    });

    it('speech recognised and translated, embedded in mkv; clipped, the tracks are cut and shifted; what was not needed is refunded', async () => {
      const before = await s.credits();
      const res = await s.api('POST', '/v1/download', { url: fx.url('/players/speech.mp4'), format: 'mkv', subtitles: { languages: ['en', 'es'], source: 'speech' } });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      // charged at most: 1 + speech 4 + 1 per language
      assert.equal(res.body.credits_charged, 7);
      const job = await s.waitJob(res.body.job_id);
      assert.equal(job.status, 'completed', job.error_message ?? '');
      // English was spoken (not translated): 1 credit back
      assert.equal(job.credits_charged, 6);
      assert.equal(await s.credits(), before - 6);
      assert.deepEqual(job.result_data!.subtitles, [
        { language: 'en', source: 'speech' },
        { language: 'es', source: 'translation' },
      ]);
      const file = await fetchTo(job.download_url!, 'speech.mkv');
      assert.deepEqual((await subtitleStreams(file)).map((t) => [t.codec, t.language, t.title]), [
        ['subrip', 'eng', 'English'],
        ['subrip', 'spa', 'Spanish'],
      ]);
      const english = await trackCues(file, 0);
      const text = english.map((c) => c.text.replace(/\n/g, ' ')).join(' ');
      assert.ok(wordErrorRate(EXPECTED['jfk.wav']!.text!, text) <= 0.15, text);
      const spanish = await trackCues(file, 1);
      assert.deepEqual(spanish.map((c) => [c.start, c.end]), english.map((c) => [c.start, c.end]));
      assert.match(spanish.map((c) => c.text).join(' '), /pa[ií]s/i);

      // clipped to 3–8 s: every cue within the clip, shifted to it
      const clipped = await completed('/v1/download', { url: fx.url('/players/speech.mp4'), format: 'mp4', clip_start: '3', clip_end: '8', subtitles: { languages: ['en'] } });
      const clip = await fetchTo(clipped.download_url!, 'speech-clip.mp4');
      assert.deepEqual((await subtitleStreams(clip)).map((t) => [t.codec, t.language]), [['mov_text', 'eng']]);
      const cut = await trackCues(clip, 0);
      assert.ok(cut.length > 0);
      for (const c of cut) assert.ok(c.start >= 0 && c.end <= 5.05 && c.end > c.start, JSON.stringify(c));
      const whole = english.filter((c) => c.end > 3 && c.start < 8);
      assert.deepEqual(cut.map((c) => c.text), whole.map((c) => c.text));
      assert.ok(near(cut[0]!.start, Math.max(0, whole[0]!.start - 3), 0.01), JSON.stringify([cut[0], whole[0]]));
    });

    it("auto: the platform's track where it has the language, speech for the rest; charged at most, the rest refunded", async () => {
      const before = await s.credits();
      const res = await s.api('POST', '/v1/download', { url: fx.url('/players/subtitled-speech'), format: 'webm', subtitles: { languages: ['de', 'en'] } });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.body.credits_charged, 7);
      const job = await s.waitJob(res.body.job_id);
      assert.equal(job.status, 'completed', job.error_message ?? '');
      // the German track was the page's (free), English was spoken: speech alone, 4
      assert.deepEqual(job.result_data!.subtitles, [
        { language: 'de', source: 'platform' },
        { language: 'en', source: 'speech' },
      ]);
      assert.equal(job.credits_charged, 5);
      assert.equal(await s.credits(), before - 5);
      const file = await fetchTo(job.download_url!, 'auto.webm');
      assert.deepEqual((await subtitleStreams(file)).map((t) => [t.codec, t.language]), [
        ['webvtt', 'ger'],
        ['webvtt', 'eng'],
      ]);
      assert.equal((await trackCues(file, 0))[0]!.text, 'Guten Tag und willkommen.');
      assert.match((await trackCues(file, 1)).map((c) => c.text).join(' '), /ask not what your country/i);
    });

    it('burn draws the one language into the picture: the frames under a cue change, the others do not', async () => {
      const plain = await completed('/v1/download', { url: fx.url('/players/subtitled'), format: 'mp4' });
      const burnt = await completed('/v1/download', { url: fx.url('/players/subtitled'), format: 'mp4', subtitles: { languages: ['de'], source: 'platform', mode: 'burn' } });
      assert.deepEqual(burnt.result_data!.subtitles, [{ language: 'de', source: 'platform' }]);
      const [a, b] = [await fetchTo(plain.download_url!, 'plain.mp4'), await fetchTo(burnt.download_url!, 'burnt.mp4')];
      assert.deepEqual(await subtitleStreams(b), [], 'burnt in, not a soft track');
      // mean absolute difference of the bottom third at a time, after both are decoded the same way
      const bottom = async (file: string, t: number) => (await run('ffmpeg', ['-v', 'error', '-ss', String(t), '-i', file, '-frames:v', '1', '-vf', 'crop=iw:ih/3:0:ih*2/3,scale=160:-2,format=gray', '-f', 'rawvideo', '-'], { encoding: 'buffer', maxBuffer: 1 << 24 })).stdout as Buffer;
      const diff = async (t: number) => {
        const [x, y] = [await bottom(a, t), await bottom(b, t)];
        let sum = 0;
        for (let i = 0; i < x.length; i++) sum += Math.abs(x[i]! - (y[i] ?? 0));
        return sum / x.length;
      };
      const under = await diff(5.5);
      const clear = await diff(8.2);
      assert.ok(under > 4, `the picture under a cue changed by ${under.toFixed(2)}`);
      assert.ok(clear < under / 3, `the picture without a cue changed by ${clear.toFixed(2)} (${under.toFixed(2)} under one)`);
    });

    it('subtitles for an audio-only download, or burning two languages, are 422s naming the field', async () => {
      const audio = await s.api('POST', '/v1/download', { url: fx.url('/players/talk.mp4'), format: 'mp3', subtitles: { languages: ['en'] } });
      assert.equal(audio.status, 422, JSON.stringify(audio.body));
      assert.match(JSON.stringify(audio.body), /"subtitles"/);
      const two = await s.api('POST', '/v1/download', { url: fx.url('/players/talk.mp4'), subtitles: { languages: ['en', 'de'], mode: 'burn' } });
      assert.equal(two.status, 422, JSON.stringify(two.body));
      assert.match(JSON.stringify(two.body), /subtitles\.languages/);
      // German is no target of speech here (no Apertium pair reaches it): known at creation when speech is the source
      const unreachable = await s.api('POST', '/v1/download', { url: fx.url('/players/talk.mp4'), subtitles: { languages: ['en', 'de'], source: 'speech' } });
      assert.equal(unreachable.status, 422, JSON.stringify(unreachable.body));
      assert.match(JSON.stringify(unreachable.body), /subtitles\.languages\.1/);
      const missing = await completedOrFailed('/v1/download', { url: fx.url('/players/subtitled'), subtitles: { languages: ['fr'], source: 'platform' } });
      assert.equal(missing.status, 'failed');
      assert.match(missing.error_message!, /The platform has no subtitles in fr/);
    });
  });

  describe('chapters', function () {
    it("GET /v1/info reports a platform's published chapters, and a file's own", async () => {
      const platform = await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/chaptered/watch/trip'))}`);
      assert.equal(platform.status, 200, JSON.stringify(platform.body));
      assert.deepEqual(platform.body.chapters, CHAPTERS);
      const file = await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/players/chaptered.mkv'))}`);
      assert.equal(file.status, 200, JSON.stringify(file.body));
      assert.deepEqual(file.body.chapters, CHAPTERS);
      const none = await s.api('GET', `/v1/info?url=${encodeURIComponent(fx.url('/players/talk.mp4'))}`);
      assert.deepEqual(none.body.chapters, []);
    });

    it("a download keeps a platform's chapters in mp4, mkv and webm", async () => {
      for (const format of ['mp4', 'mkv', 'webm'] as const) {
        const job = await completed('/v1/download', { url: fx.url('/chaptered/watch/trip'), format });
        const chapters = await probeChapters(await fetchTo(job.download_url!, `trip.${format}`));
        assert.deepEqual(
          chapters.map((c) => c.title),
          CHAPTERS.map((c) => c.title),
          format,
        );
        chapters.forEach((c, i) => assert.ok(near(c.start, CHAPTERS[i]!.start_time) && near(c.end, CHAPTERS[i]!.end_time), `${format} chapter ${i}: ${JSON.stringify(c)}`));
      }
    });

    it('a clipped download keeps the chapters that overlap the clip, cut and shifted to it', async () => {
      // 2.5–9 s: the opening from 0 to 1, the middle 1–5.5, the closing 5.5–6.5
      const expected = [
        { title: 'Opening', start: 0, end: 1 },
        { title: 'The middle — ünïcode', start: 1, end: 5.5 },
        { title: 'Closing', start: 5.5, end: 6.5 },
      ];
      for (const [url, format] of [
        [fx.url('/players/chaptered.mkv'), 'mp4'],
        [fx.url('/chaptered/watch/trip'), 'webm'],
        [fx.url('/players/chaptered.mkv'), 'mkv'],
      ] as const) {
        const job = await completed('/v1/download', { url, format, clip_start: '2.5', clip_end: '9' });
        const chapters = await probeChapters(await fetchTo(job.download_url!, `clip.${format}`));
        assert.equal(chapters.length, expected.length, `${url} as ${format}: ${JSON.stringify(chapters)}`);
        chapters.forEach((c, i) => {
          assert.equal(c.title, expected[i]!.title);
          assert.ok(near(c.start, expected[i]!.start, 0.1) && near(c.end, expected[i]!.end, 0.1), `${format} chapter ${i}: ${JSON.stringify(c)}`);
        });
      }
      // a clip inside one chapter keeps just that one, as long as the clip
      const job = await completed('/v1/download', { url: fx.url('/players/chaptered.mkv'), format: 'mkv', clip_start: '4', clip_end: '6' });
      const inside = await probeChapters(await fetchTo(job.download_url!, 'inside.mkv'));
      assert.equal(inside.length, 1, JSON.stringify(inside));
      assert.equal(inside[0]!.title, 'The middle — ünïcode');
      assert.ok(near(inside[0]!.start, 0, 0.1) && near(inside[0]!.end, 2, 0.1), JSON.stringify(inside));
    });
  });
});
