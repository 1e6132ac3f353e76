// The ffmpeg recipes: a plan in, the argument list out, checked without running ffmpeg.
import assert from 'node:assert/strict';
import {
  audioPass,
  deliveryFilters,
  denoiseFilter,
  editEncode,
  editStep,
  finalStep,
  mp4IsFinal,
  normalizationType,
  normalizeFilter,
  timeWindow,
} from '../../engines/ffmpeg/recipes/download';
import { clipRecipe, gifRecipe, mosaicOnePassRecipe, mosaicReadsOnce, mosaicTileRuns, mosaicTimes, thumbnailRecipe } from '../../engines/ffmpeg/recipes/preview';

const file = (before: string[]) => [...before, '-i', 'in.mp4'];
const h264 = (crf: number) => ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(crf), '-pix_fmt', 'yuv420p'];
// a re-encode draws the displayed picture with square pixels and even sides
const displayEncode = (codec: string[]) => ['-vf', 'scale=max(2\\,trunc(iw*sar/2)*2):max(2\\,trunc(ih/2)*2):flags=lanczos,setsar=1', ...codec];

describe('ffmpeg recipes: previews', () => {
  it('gif: a seeked window, the palette pair at the fps and width asked, looping', () => {
    const r = gifRecipe(file, { start: 1.5, length: 2, fps: 12, width: 320 }, 'o.gif');
    assert.deepEqual(r.args, [
      '-ss', '1.500', '-t', '2.000', '-i', 'in.mp4',
      '-filter_complex', '[0:v:0]trim=duration=2.000,fps=12,scale=320:max(1\\,round(ow/dar)):flags=lanczos,setsar=1,split[a][b];[a]palettegen=stats_mode=diff[pal];[b][pal]paletteuse=dither=bayer:bayer_scale=5',
      '-loop', '0', '-y', 'o.gif',
    ]);
    assert.equal(r.covers, 2);
  });

  it('thumbnail: one frame at the time asked, scaled, as a JPEG', () => {
    const r = thumbnailRecipe(file, { at: 0.25, width: 160 }, 'o.jpg');
    assert.deepEqual(r.args, ['-ss', '0.250', '-i', 'in.mp4', '-map', '0:v:0', '-frames:v', '1', '-vf', 'scale=160:max(1\\,round(ow/dar)):flags=lanczos,setsar=1', '-q:v', '2', '-update', '1', '-f', 'image2', '-c:v', 'mjpeg', '-y', 'o.jpg']);
  });

  it('mosaic by seeks: four seeked inputs per run, decoded on one thread, each tile its own PNG the sheet\'s width over the columns (rounded up)', () => {
    const r = mosaicTileRuns(file, { times: [1, 2, 3, 4, 5, 6], columns: 3, rows: 2, width: 500 }, 'tiles');
    assert.deepEqual(r.sheet, { columns: 3, rows: 2, tileWidth: 167, width: 500 });
    assert.deepEqual(r.tiles, ['tiles/tile-00.png', 'tiles/tile-01.png', 'tiles/tile-02.png', 'tiles/tile-03.png', 'tiles/tile-04.png', 'tiles/tile-05.png']);
    assert.equal(r.runs.length, 2);
    const [first, second] = r.runs.map((run) => run.args);
    assert.deepEqual(first!.slice(0, 13), ['-threads', '1', '-ss', '1.000', '-i', 'in.mp4', '-threads', '1', '-ss', '2.000', '-i', 'in.mp4', '-threads']);
    assert.equal(first!.filter((a) => a === '-i').length, 4);
    assert.equal(second!.filter((a) => a === '-i').length, 2);
    assert.match(second!.join(' '), /^-threads 1 -ss 5\.000 -i in\.mp4 -threads 1 -ss 6\.000 -i in\.mp4 /);
    const graph = second![second!.indexOf('-filter_complex') + 1]!;
    assert.equal(graph, '[0:v:0]trim=end_frame=1,setpts=PTS-STARTPTS,scale=167:max(1\\,round(ow/dar)):flags=lanczos,setsar=1[f0];[1:v:0]trim=end_frame=1,setpts=PTS-STARTPTS,scale=167:max(1\\,round(ow/dar)):flags=lanczos,setsar=1[f1]');
    assert.deepEqual(second!.slice(-24), [
      '-map', '[f0]', '-frames:v', '1', '-update', '1', '-f', 'image2', '-c:v', 'png', '-y', 'tiles/tile-04.png',
      '-map', '[f1]', '-frames:v', '1', '-update', '1', '-f', 'image2', '-c:v', 'png', '-y', 'tiles/tile-05.png',
    ]);
  });

  it('mosaic read once: one input, each tile the first frame at or after its time (select), tiled then scaled', () => {
    const r = mosaicOnePassRecipe(file, { times: [1, 2.5], columns: 2, rows: 1, width: 500 }, 'o.jpg');
    assert.deepEqual(r.args.slice(0, 4), ['-i', 'in.mp4', '-filter_complex', "[0:v:0]setpts=PTS-STARTPTS,select='gte(t,1.000)*lt(prev_t,1.000)+gte(t,2.500)*lt(prev_t,2.500)',scale=250:max(1\\,round(ow/dar)):flags=lanczos,setsar=1,tile=2x1,scale=500:-1:flags=lanczos"]);
    assert.deepEqual(r.args.slice(-12), ['-frames:v', '1', '-q:v', '2', '-update', '1', '-f', 'image2', '-c:v', 'mjpeg', '-y', 'o.jpg']);
  });

  it('a mosaic reads its source once only when it is short and every tile is two frames from the last', () => {
    const hd = { width: 1280, height: 720, avg_frame_rate: '25/1' };
    const times = (length: number, n: number) => mosaicTimes({ ...hd, duration: String(length) }, length, n);
    assert.equal(mosaicReadsOnce(hd, times(60, 16), 60), true);
    assert.equal(mosaicReadsOnce(hd, times(91, 16), 91), false, 'over 90 s of 720p: a seek per tile');
    assert.equal(mosaicReadsOnce({ ...hd, width: 320, height: 240 }, times(600, 16), 600), true, 'a small picture: 600 s of it decode as quickly');
    assert.equal(mosaicReadsOnce(hd, times(60, 16), 60, 65 * 1024 * 1024), false, 'over 64 MB');
    assert.equal(mosaicReadsOnce({ ...hd, width: 3840, height: 2160 }, times(20, 16), 20), false, '20 s of 4K is 180 s of 720p in pixels');
    assert.equal(mosaicReadsOnce(hd, times(1, 64), 1), false, '64 tiles of 25 frames: tiles would share frames');
    assert.equal(mosaicReadsOnce({ avg_frame_rate: '25/1' }, times(10, 4), 10), false, 'no size known: seek');
  });

  it('mosaic times: the middle of each equal part, never past the last frame', () => {
    assert.deepEqual(mosaicTimes({ duration: '4', avg_frame_rate: '25/1' }, 4, 4), [0.5, 1.5, 2.5, 3.5]);
    // a 1 s stream at 10 fps in 2 parts: the second middle (0.75 s) is before the last frame (1 - 0.15 s)
    assert.deepEqual(mosaicTimes({ duration: '1', avg_frame_rate: '10/1' }, 1, 2), [0.25, 0.75]);
    // the stream shorter than the container: its own length counts, capped 1.5 frames before its end
    assert.deepEqual(mosaicTimes({ duration: '2', avg_frame_rate: '1/1' }, 10, 1), [0.5]);
    assert.deepEqual(mosaicTimes({ avg_frame_rate: '0/0' }, 2, 2), [0.5, 1.5]);
  });

  it('clip: H.264 at an even width, AAC only when the source has audio, faststart', () => {
    const withAudio = clipRecipe(file, { start: 0, length: 3, width: 481, hasAudio: true }, 'o.mp4');
    assert.deepEqual(withAudio.args, ['-ss', '0.000', '-i', 'in.mp4', '-t', '3.000', '-map', '0:v:0', '-map', '0:a:0', '-vf', 'scale=480:max(2\\,trunc(ow/dar/2+0.5)*2):flags=lanczos,setsar=1', ...h264(23), '-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart', '-y', 'o.mp4']);
    const silent = clipRecipe(file, { start: 0, length: 3, width: 480, hasAudio: false }, 'o.mp4');
    assert.ok(!silent.args.includes('-c:a') && !silent.args.includes('0:a:0'));
  });
});

describe('ffmpeg recipes: a download', () => {
  const codecs = (vcodec: string | null, acodec: string | null) => ({ vcodec, acodec });

  it('final step: copies what the container takes, encodes the rest, keeps a file that is already final', () => {
    assert.deepEqual(finalStep('best', 'mp4', codecs('h264', 'aac'), 'mp4'), { ext: 'mp4', outputOptions: ['-map', '0', '-map', '-0:d', '-c:v', 'copy', '-c:a', 'copy', '-movflags', '+faststart'] });
    assert.deepEqual(finalStep('best', 'mp4', codecs('vp9', 'opus'), 'webm'), { ext: 'mp4', outputOptions: ['-map', '0', '-map', '-0:d', ...displayEncode(h264(22)), '-c:a', 'aac', '-b:a', '160k', '-movflags', '+faststart'] });
    assert.deepEqual(finalStep('best', 'webm', codecs('h264', 'aac'), 'mp4').outputOptions, ['-map', '0', '-map', '-0:d', ...displayEncode(['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-b:v', '0', '-crf', '33', '-pix_fmt', 'yuv420p']), '-c:a', 'libopus', '-b:a', '128k']);
    assert.deepEqual(finalStep('best', 'mkv', codecs('h264', 'aac'), 'mp4'), { ext: 'mkv', outputOptions: ['-map', '0', '-map', '-0:d', '-c', 'copy'] });
    assert.deepEqual(finalStep('best', null, codecs('h264', 'aac'), 'mp4'), { ext: 'mp4', outputOptions: null });
    // an MP4 with its index in front and only tracks MP4 carries is kept as it is; from any other container it is written
    assert.deepEqual(finalStep('best', 'mp4', codecs('h264', 'aac'), 'mp4', true), { ext: 'mp4', outputOptions: null });
    assert.notEqual(finalStep('best', 'mp4', codecs('h264', 'aac'), 'mov', true).outputOptions, null);
    assert.deepEqual(finalStep('audio', 'mp3', codecs(null, 'mp3'), 'mp3'), { ext: 'mp3', outputOptions: ['-vn', '-c:a', 'copy'] });
    assert.deepEqual(finalStep('audio', 'mp3', codecs(null, 'aac'), 'm4a'), { ext: 'mp3', outputOptions: ['-vn', '-c:a', 'libmp3lame', '-q:a', '2'] });
    assert.deepEqual(finalStep('best', 'wav', codecs('h264', 'aac'), 'mp4'), { ext: 'wav', outputOptions: ['-vn', '-c:a', 'pcm_s16le'] });
    assert.deepEqual(finalStep('audio', null, codecs(null, 'opus'), 'webm'), { ext: 'opus', outputOptions: ['-vn', '-c:a', 'copy'] });
    assert.deepEqual(finalStep('audio', null, codecs(null, 'pcm_s24le'), 'wav'), { ext: 'm4a', outputOptions: ['-vn', '-c:a', 'aac', '-b:a', '192k'] });
  });

  it('an MP4 is final for format mp4 with its index in front and only video and audio tracks MP4 carries', () => {
    const v = { codec_type: 'video', codec_name: 'h264' };
    const a = { codec_type: 'audio', codec_name: 'aac' };
    assert.equal(mp4IsFinal([v, a], true), true);
    assert.equal(mp4IsFinal([a], true), true);
    assert.equal(mp4IsFinal([v, a], false), false, 'the index at the end: the remux moves it to the front');
    assert.equal(mp4IsFinal([v, a, { codec_type: 'data', codec_name: 'bin_data' }], true), false, 'a data track: the remux drops it');
    assert.equal(mp4IsFinal([v, { codec_type: 'subtitle', codec_name: 'mov_text' }], true), false);
    assert.equal(mp4IsFinal([{ codec_type: 'video', codec_name: 'vp9' }, a], true), false);
    assert.equal(mp4IsFinal([], true), false);
  });

  it('edit step: audio always encoded; video copied unless cut or the container refuses it', () => {
    const maps = ['-map', '0:v:0', '-map', '0:a:0?', '-sn'];
    assert.deepEqual(editStep('best', 'mp4', codecs('h264', 'aac'), 'mp4', false), { ext: 'mp4', outputOptions: [...maps, '-c:v', 'copy', '-c:a', 'aac', '-b:a', '192k', '-movflags', '+faststart'] });
    assert.deepEqual(editStep('best', 'mp4', codecs('h264', 'aac'), 'mp4', true).outputOptions.slice(5, 15), displayEncode(h264(20)));
    assert.deepEqual(editStep('best', null, codecs('vp9', 'opus'), 'webm', false), { ext: 'webm', outputOptions: [...maps, '-c:v', 'copy', '-c:a', 'libopus', '-b:a', '128k'] });
    assert.equal(editStep('best', null, codecs('vp9', 'opus'), 'flv', false).ext, 'mkv');
    assert.deepEqual(editStep('audio', null, codecs('h264', 'opus'), 'webm', false), { ext: 'opus', outputOptions: ['-vn', '-sn', '-map', '0:a:0?', '-c:a', 'libopus', '-b:a', '128k'] });
    assert.deepEqual(editStep('best', 'wav', codecs('h264', 'aac'), 'mp4', true), { ext: 'wav', outputOptions: ['-vn', '-sn', '-map', '0:a:0', '-c:a', 'pcm_s16le'] });
    assert.deepEqual(editStep('best', null, codecs(null, 'aac'), 'm4a', true), { ext: 'm4a', outputOptions: ['-vn', '-sn', '-map', '0:a:0?', '-c:a', 'aac', '-b:a', '192k'] });
  });

  it('time window: -ss (before the input) and -t (after it) only where they differ from the source bounds', () => {
    assert.deepEqual(timeWindow(0, 10, 10), { seek: [], length: [] });
    assert.deepEqual(timeWindow(1.25, 10, 10), { seek: ['-ss', '1.250'], length: [] });
    assert.deepEqual(timeWindow(0, 4, 10), { seek: [], length: ['-t', '4.000'] });
    assert.deepEqual(timeWindow(2, 5, 10), { seek: ['-ss', '2.000'], length: ['-t', '3.000'] });
  });

  it('measuring passes decode the first audio stream through the filters and write nothing', () => {
    assert.deepEqual(audioPass({ seek: ['-ss', '1.000'], length: ['-t', '2.000'] }, 'in.m4a', ['a', 'b']), ['-ss', '1.000', '-i', 'in.m4a', '-t', '2.000', '-vn', '-sn', '-map', '0:a:0', '-af', 'a,b', '-f', 'null', '-']);
  });

  it('denoise: the floor 2 dB above the RMS trough, kept within -80…-20 dB', () => {
    assert.equal(denoiseFilter('[Parsed_astats_0] RMS trough dB: -61.3'), 'afftdn=nr=30:nf=-59');
    assert.equal(denoiseFilter('RMS trough dB: -10.0'), 'afftdn=nr=30:nf=-20');
    assert.equal(denoiseFilter('RMS trough dB: -inf'), 'afftdn=nr=30:nf=-80');
    assert.equal(denoiseFilter('no figure'), 'afftdn=nr=30:nf=-80');
  });

  it("normalize: the second pass carries the first pass's figures, linear, with the range widened to fit", () => {
    const f = normalizeFilter({ input_i: -30.2, input_tp: -12.1, input_lra: 14.4, input_thresh: -40.5, target_offset: 0.3 });
    assert.equal(f, 'loudnorm=I=-16:TP=-1.5:LRA=16:measured_I=-30.2:measured_TP=-12.1:measured_LRA=14.4:measured_thresh=-40.5:offset=0.3:linear=true:print_format=json');
    assert.match(normalizeFilter({ input_i: -20, input_tp: -3, input_lra: 2, input_thresh: -30, target_offset: 0 }), /:LRA=11:/);
    assert.equal(normalizationType('x [Parsed_loudnorm_1 @ 0x1]\n{ "normalization_type" : "linear" }'), 'linear');
    assert.equal(normalizationType('nothing'), null);
  });

  it("delivery: the source's rate and layout after the filters (mono when it has one channel and no layout)", () => {
    assert.deepEqual(deliveryFilters({ sample_rate: '44100', channel_layout: '5.1' }), ['aresample=44100', 'aformat=sample_rates=44100:channel_layouts=5.1']);
    assert.deepEqual(deliveryFilters({ sample_rate: '22050', channels: 1 }), ['aresample=22050', 'aformat=sample_rates=22050:channel_layouts=mono']);
    assert.deepEqual(deliveryFilters(undefined), ['aresample=48000', 'aformat=sample_rates=48000:channel_layouts=stereo']);
  });

  it('the encode: the seek before the input, the length, the step, the filters, the output', () => {
    const step = { ext: 'mp3', outputOptions: ['-vn'] };
    assert.deepEqual(editEncode({ seek: ['-ss', '1.000'], length: ['-t', '2.000'] }, 'in', step, ['f1', 'f2'], 'out.mp3'), ['-ss', '1.000', '-i', 'in', '-y', '-t', '2.000', '-vn', '-af', 'f1,f2', 'out.mp3']);
    assert.deepEqual(editEncode({ seek: [], length: [] }, 'in', step, [], 'out.mp3'), ['-i', 'in', '-y', '-vn', 'out.mp3']);
  });
});
