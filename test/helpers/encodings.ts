/**
 * Media as people record and publish it, made here with ffmpeg (once, into a cache folder): phone
 * videos with a display rotation, anamorphic broadcast pictures, screen recordings in 4:4:4 at odd
 * sizes, 10-bit HEVC, AV1, VP9, ProRes, MJPEG, interlaced MPEG-2 in MPEG-TS, variable and high frame
 * rates, tiny pictures, fragmented MP4, several audio tracks, and the audio formats podcasts and
 * archives use. Each says what a player shows of it: the displayed size and the real duration.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SPEECH_DIR } from './speech-fixtures';

const run = promisify(execFile);

export interface Encoding {
  /** The file's name in the folder (its extension is the container's usual one). */
  file: string;
  /** What a player shows: the picture's size (null for audio alone). */
  display: { width: number; height: number } | null;
  /** Seconds, as the streams' timestamps say. */
  duration: number;
  hasAudio: boolean;
  /** The spoken words of the shared recording this was made from, when it is speech. */
  speech?: 'jfk.wav';
}

const SECONDS = 3;
const JFK = 11; // the shared jfk.wav, rounded to what its timestamps give (11.0 s)
// testsrc2 draws even sizes only: odd ones are scaled from it
const picture = (size: string, rate = 25) => ['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=${rate}`];
const tone = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000'];
const x264 = (pixFmt = 'yuv420p') => ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', pixFmt, '-g', '25'];
const aac = ['-c:a', 'aac', '-b:a', '96k'];
const short = ['-t', String(SECONDS)];

interface Recipe extends Encoding {
  /** ffmpeg arguments before the output file; `{src:NAME}` is replaced with another encoding's path. */
  args: string[];
}

/** Every encoding; the video ones go through every picture operation, all through every one that takes audio. */
const RECIPES: Recipe[] = [
  // phones store portrait recordings landscape with a display rotation (the track header's matrix)
  { file: 'phone-landscape.mp4', display: { width: 640, height: 360 }, duration: SECONDS, hasAudio: true, args: [...picture('640x360', 30), ...tone, ...short, ...x264(), ...aac] },
  { file: 'rotate-90.mp4', display: { width: 360, height: 640 }, duration: SECONDS, hasAudio: true, args: ['-i', '{src:phone-landscape.mp4}', '-c', 'copy', '-metadata:s:v:0', 'rotate=90'] },
  { file: 'rotate-180.mp4', display: { width: 640, height: 360 }, duration: SECONDS, hasAudio: true, args: ['-i', '{src:phone-landscape.mp4}', '-c', 'copy', '-metadata:s:v:0', 'rotate=180'] },
  { file: 'rotate-270.mp4', display: { width: 360, height: 640 }, duration: SECONDS, hasAudio: true, args: ['-i', '{src:phone-landscape.mp4}', '-c', 'copy', '-metadata:s:v:0', 'rotate=270'] },
  // PAL DVD and broadcast: 720×576 stored, 16:15 pixels, shown 768×576
  { file: 'anamorphic-pal.mp4', display: { width: 768, height: 576 }, duration: SECONDS, hasAudio: true, args: [...picture('720x576'), ...tone, ...short, '-vf', 'setsar=16/15', ...x264(), ...aac] },
  // screen recorders: full-chroma H.264 at the window's odd size
  { file: 'screen-444-odd.mp4', display: { width: 641, height: 361 }, duration: SECONDS, hasAudio: true, args: [...picture('640x360'), ...tone, ...short, '-vf', 'scale=641:361', ...x264('yuv444p'), ...aac] },
  { file: 'h264-422.mp4', display: { width: 640, height: 360 }, duration: SECONDS, hasAudio: true, args: [...picture('640x360'), ...tone, ...short, ...x264('yuv422p'), ...aac] },
  { file: 'hevc-10bit.mp4', display: { width: 640, height: 360 }, duration: SECONDS, hasAudio: true, args: [...picture('640x360'), ...tone, ...short, '-c:v', 'libx265', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p10le', '-tag:v', 'hvc1', '-x265-params', 'log-level=error', ...aac] },
  { file: 'av1.mp4', display: { width: 320, height: 180 }, duration: SECONDS, hasAudio: true, args: [...picture('320x180'), ...tone, ...short, '-c:v', 'libsvtav1', '-preset', '12', '-pix_fmt', 'yuv420p', ...aac] },
  { file: 'vp9-opus.webm', display: { width: 320, height: 180 }, duration: SECONDS, hasAudio: true, args: [...picture('320x180'), ...tone, ...short, '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '300k', '-c:a', 'libopus'] },
  { file: 'prores.mov', display: { width: 640, height: 360 }, duration: SECONDS, hasAudio: true, args: [...picture('640x360'), ...tone, ...short, '-c:v', 'prores_ks', '-profile:v', '0', '-c:a', 'pcm_s16le'] },
  { file: 'mjpeg.avi', display: { width: 640, height: 360 }, duration: SECONDS, hasAudio: true, args: [...picture('640x360'), ...tone, ...short, '-c:v', 'mjpeg', '-q:v', '5', '-pix_fmt', 'yuvj420p', '-c:a', 'pcm_s16le'] },
  // interlaced MPEG-2 in MPEG-TS, as broadcast captures are (NTSC 704×480 at 10:11 pixels: shown 640×480)
  { file: 'mpeg2-interlaced.ts', display: { width: 640, height: 480 }, duration: SECONDS, hasAudio: true, args: [...picture('704x480', 30), ...tone, ...short, '-vf', 'setsar=10/11', '-c:v', 'mpeg2video', '-flags', '+ilme+ildct', '-top', '1', '-b:v', '2M', '-c:a', 'mp2'] },
  // variable frame rate: frames dropped unevenly, as phones do in low light
  { file: 'vfr.mp4', display: { width: 640, height: 360 }, duration: SECONDS, hasAudio: true, args: [...picture('640x360', 30), ...tone, ...short, '-vf', "select='not(mod(n\\,3))+not(mod(n\\,7))'", '-fps_mode', 'vfr', ...x264(), ...aac] },
  { file: 'fps-120.mp4', display: { width: 320, height: 180 }, duration: SECONDS, hasAudio: true, args: [...picture('320x180', 120), ...tone, ...short, ...x264(), ...aac] },
  { file: 'tiny-32x18.mp4', display: { width: 32, height: 18 }, duration: SECONDS, hasAudio: true, args: [...picture('32x18'), ...tone, ...short, ...x264(), ...aac] },
  { file: 'odd-321x241.mkv', display: { width: 321, height: 241 }, duration: SECONDS, hasAudio: true, args: [...picture('320x240'), ...tone, ...short, '-vf', 'scale=321:241', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv444p', '-c:a', 'libvorbis'] },
  // what DASH packagers and live recorders write: fragments, and no index of them at the end
  { file: 'fragmented.mp4', display: { width: 640, height: 360 }, duration: 8, hasAudio: true, args: [...picture('640x360'), ...tone, '-t', '8', ...x264(), ...aac, '-movflags', '+frag_keyframe+empty_moov+default_base_moof', '-f', 'mp4'] },
  // a CDN's HLS stream: a master playlist naming one rendition, one-second MPEG-TS segments
  { file: 'stream.m3u8', display: { width: 640, height: 360 }, duration: 4, hasAudio: true, args: [...picture('640x360'), ...tone, '-t', '4', ...x264(), ...aac, '-f', 'hls', '-hls_time', '1', '-hls_playlist_type', 'vod', '-hls_segment_filename', '{dir}/stream-%d.ts', '-master_pl_name', 'stream.m3u8'] },
  { file: 'transport.ts', display: { width: 640, height: 360 }, duration: 8, hasAudio: true, args: [...picture('640x360'), ...tone, '-t', '8', ...x264(), ...aac, '-f', 'mpegts'] },
  { file: 'two-audio-tracks.mkv', display: { width: 320, height: 180 }, duration: SECONDS, hasAudio: true, args: [...picture('320x180'), ...tone, '-f', 'lavfi', '-i', 'sine=frequency=660', ...short, '-map', '0:v', '-map', '1:a', '-map', '2:a', ...x264(), ...aac] },
  { file: 'surround-5.1.mp4', display: { width: 320, height: 180 }, duration: SECONDS, hasAudio: true, args: [...picture('320x180'), '-f', 'lavfi', '-i', 'sine=frequency=440,aformat=channel_layouts=5.1', ...short, ...x264(), ...aac] },
  // audio as podcasts, archives and phone systems keep it: the shared 11 s speech recording
  { file: 'speech-cover.mp3', display: null, duration: JFK, hasAudio: true, speech: 'jfk.wav', args: ['-i', path.join(SPEECH_DIR, 'jfk.wav'), '-f', 'lavfi', '-i', 'testsrc2=size=300x300:rate=1:duration=1', '-map', '0:a', '-map', '1:v', '-frames:v', '1', '-c:a', 'libmp3lame', '-q:a', '4', '-c:v', 'mjpeg', '-disposition:v', 'attached_pic', '-id3v2_version', '3'] },
  { file: 'speech.ogg', display: null, duration: JFK, hasAudio: true, speech: 'jfk.wav', args: ['-i', path.join(SPEECH_DIR, 'jfk.wav'), '-c:a', 'libvorbis', '-q:a', '3'] },
  { file: 'speech.opus', display: null, duration: JFK, hasAudio: true, speech: 'jfk.wav', args: ['-i', path.join(SPEECH_DIR, 'jfk.wav'), '-c:a', 'libopus', '-b:a', '48k'] },
  { file: 'speech.flac', display: null, duration: JFK, hasAudio: true, speech: 'jfk.wav', args: ['-i', path.join(SPEECH_DIR, 'jfk.wav'), '-c:a', 'flac'] },
  { file: 'speech-alac.m4a', display: null, duration: JFK, hasAudio: true, speech: 'jfk.wav', args: ['-i', path.join(SPEECH_DIR, 'jfk.wav'), '-c:a', 'alac'] },
  { file: 'speech.wma', display: null, duration: JFK, hasAudio: true, speech: 'jfk.wav', args: ['-i', path.join(SPEECH_DIR, 'jfk.wav'), '-c:a', 'wmav2', '-b:a', '64k', '-f', 'asf'] },
  { file: 'speech-ulaw-8k.wav', display: null, duration: JFK, hasAudio: true, speech: 'jfk.wav', args: ['-i', path.join(SPEECH_DIR, 'jfk.wav'), '-ar', '8000', '-c:a', 'pcm_mulaw'] },
];

/** A Matroska file whose Segment states no duration (a live recorder's that was never finalised). */
const NO_DURATION_MKV: Encoding = { file: 'no-duration.mkv', display: { width: 320, height: 180 }, duration: SECONDS, hasAudio: false };

export const ENCODINGS: Encoding[] = [...RECIPES.map(({ args: _args, ...e }) => e), NO_DURATION_MKV];

/** A phone's portrait recording of someone speaking (the shared jfk.wav), stored landscape with a 90° display rotation. */
export const PORTRAIT_SPEECH: Encoding = { file: 'portrait-speech.mp4', display: { width: 360, height: 640 }, duration: JFK, hasAudio: true, speech: 'jfk.wav' };

/** The ones with a picture. */
export const VIDEO_ENCODINGS = ENCODINGS.filter((e) => e.display !== null);

/** Makes every encoding once into a cache folder (kept between runs: each file is written whole or not at all); returns the folder. */
export async function encodingsDir(): Promise<string> {
  const dir = path.join(os.tmpdir(), 'mediasvc-encodings-v1');
  fs.mkdirSync(dir, { recursive: true });
  for (const r of RECIPES) {
    const out = path.join(dir, r.file);
    if (fs.existsSync(out)) continue;
    const tmp = path.join(dir, `.${process.pid}-${r.file}`);
    const args = r.args.map((a) => a.replace(/^\{src:(.+)\}$/, (_m, name: string) => path.join(dir, name)).replace(/^\{dir\}/, dir));
    // an HLS master playlist is written beside its media playlist, under the name asked for
    await run('ffmpeg', ['-v', 'error', '-y', ...args, r.file.endsWith('.m3u8') ? path.join(dir, 'stream-media.m3u8') : tmp]);
    if (r.file.endsWith('.m3u8')) continue;
    if (r.args.includes('+frag_keyframe+empty_moov+default_base_moof')) fs.writeFileSync(tmp, withoutFragmentIndex(fs.readFileSync(tmp)));
    fs.renameSync(tmp, out);
  }
  const portrait = path.join(dir, PORTRAIT_SPEECH.file);
  if (!fs.existsSync(portrait)) {
    const [landscape, tmp] = [path.join(dir, `.${process.pid}-landscape-speech.mp4`), path.join(dir, `.${process.pid}-${PORTRAIT_SPEECH.file}`)];
    await run('ffmpeg', ['-v', 'error', '-y', ...picture('640x360'), '-i', path.join(SPEECH_DIR, 'jfk.wav'), '-map', '0:v', '-map', '1:a', '-shortest', ...x264(), ...aac, landscape]);
    await run('ffmpeg', ['-v', 'error', '-y', '-i', landscape, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', tmp]);
    fs.rmSync(landscape);
    fs.renameSync(tmp, portrait);
  }
  const mkv = path.join(dir, NO_DURATION_MKV.file);
  if (!fs.existsSync(mkv)) {
    const tmp = path.join(dir, `.${process.pid}-${NO_DURATION_MKV.file}`);
    await run('ffmpeg', ['-v', 'error', '-y', ...picture('320x180'), ...short, ...x264(), '-f', 'matroska', tmp]);
    fs.writeFileSync(tmp, withoutSegmentDuration(fs.readFileSync(tmp)));
    fs.renameSync(tmp, mkv);
  }
  return dir;
}

/**
 * The Matroska file with its Segment Info's Duration element (ID 0x4489) overwritten by a Void
 * element of the same length, so nothing else moves: what a recorder that stopped before its
 * last write leaves.
 */
function withoutSegmentDuration(mkv: Buffer): Buffer {
  const out = Buffer.from(mkv);
  const at = out.indexOf(Buffer.from([0x44, 0x89]));
  if (at < 0 || at > 4096) throw new Error('no Duration element near the start of the Matroska file');
  const length = out[at + 2]! & 0x7f; // a one-byte size (0x84 or 0x88)
  out[at] = 0xec;
  out[at + 1] = 0x80 | (length + 1);
  out.fill(0, at + 2, at + 3 + length);
  return out;
}

/** The fragmented MP4 without its fragment index (`mfra`, which ffmpeg writes last and packagers streaming to a CDN do not). */
function withoutFragmentIndex(mp4: Buffer): Buffer {
  for (let at = 0; at + 8 <= mp4.length; ) {
    const size = mp4.readUInt32BE(at);
    if (mp4.toString('latin1', at + 4, at + 8) === 'mfra') return mp4.subarray(0, at);
    if (size < 8) break;
    at += size;
  }
  return mp4;
}

/**
 * A two-hour fragmented MP4 of a tiny picture at one frame a second (a few MB): its index names no
 * samples and its first fragment lasts 10 s, so only the fragments tell its length.
 */
export async function longFragmentedMp4(dir: string): Promise<{ file: string; duration: number }> {
  const file = path.join(dir, 'two-hours-fragmented.mp4');
  const duration = 7300;
  if (!fs.existsSync(file)) {
    const tmp = path.join(dir, `.${process.pid}-two-hours-fragmented.mp4`);
    await run('ffmpeg', ['-v', 'error', '-y', ...picture('32x18', 1), '-t', String(duration), '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-pix_fmt', 'yuv420p', '-movflags', '+frag_keyframe+empty_moov+default_base_moof', '-f', 'mp4', tmp]);
    fs.writeFileSync(tmp, withoutFragmentIndex(fs.readFileSync(tmp)));
    fs.renameSync(tmp, file);
  }
  return { file: path.basename(file), duration };
}
