import fs from 'node:fs/promises';
import type { ProbeResult, ProbeStream } from './ffmpeg.engine';

/**
 * An MP4's index (its `moov` box), read without ffprobe: a file's or a URL's size, duration and
 * tracks come from a few kilobytes of boxes. Anything this reader does not know for sure (a
 * fragmented file, an unknown video codec, an index cut short or too big) reads as null, and the
 * caller asks ffprobe, which knows every container. So does a picture shown at another size than
 * it is stored (a display rotation, non-square pixels), whose displayed size ffprobe reports.
 */

/** One track as the index describes it. */
export interface Mp4Track {
  kind: 'video' | 'audio' | 'other';
  /** The sample entry's four-character code (avc1, mp4a…). */
  fourcc: string;
  /** The sample entry's picture size (video only; 0 otherwise). */
  width: number;
  height: number;
  /** Samples in the track: for video, its frames. */
  samples: number;
  /** Seconds, as ffmpeg reports the track's (see trackDuration); undefined where it cannot be said simply. */
  duration: number | undefined;
  /** Frames per second as a reduced "num/den", from the sample durations (ffmpeg's avg_frame_rate for MP4). */
  rate: string | null;
}

export interface Mp4Index {
  /** Seconds, as the movie header gives it. */
  duration: number;
  tracks: Mp4Track[];
}

/** Reads up to `length` bytes at `start` (fewer only at the end); throws when it cannot. */
export type ByteReader = (start: number, length: number) => Promise<Buffer>;

/** Bigger indexes are not ours (a 10 min video's is a few hundred KB): left to ffprobe. */
const MAX_MOOV_BYTES = 16 * 1024 * 1024;

interface Box {
  type: string;
  /** Start and end of the payload (after the header), in the buffer's or the file's offsets. */
  start: number;
  end: number;
}

/**
 * The box whose header starts at `at`: `readable` bytes of the buffer are there to read its header,
 * and the box must end within `limit` (both offsets in the same space as `at`).
 */
function boxAt(buf: Buffer, at: number, limit: number, readable = limit): Box | null {
  if (at + 8 > readable) return null;
  let size = buf.readUInt32BE(at);
  let header = 8;
  if (size === 1) {
    if (at + 16 > readable) return null;
    size = Number(buf.readBigUInt64BE(at + 8));
    header = 16;
  } else if (size === 0) {
    size = limit - at; // to the end
  }
  if (size < header || at + size > limit) return null;
  return { type: buf.toString('latin1', at + 4, at + 8), start: at + header, end: at + size };
}

function children(buf: Buffer, parent: { start: number; end: number }): Box[] {
  const out: Box[] = [];
  for (let at = parent.start; at < parent.end; ) {
    const box = boxAt(buf, at, parent.end);
    if (!box) break;
    out.push(box);
    at = box.end;
  }
  return out;
}

const child = (buf: Buffer, parent: Box, type: string) => children(buf, parent).find((b) => b.type === type);

/** A full box's version and the offset just after its version and flags. */
const full = (buf: Buffer, box: Box) => ({ version: buf.readUInt8(box.start), at: box.start + 4 });

/** The timescale and duration of a movie (mvhd) or media (mdhd) header, which share their layout. */
function timing(buf: Buffer, box: Box): { timescale: number; length: number } {
  const h = full(buf, box);
  return h.version === 1 ? { timescale: buf.readUInt32BE(h.at + 16), length: Number(buf.readBigUInt64BE(h.at + 20)) } : { timescale: buf.readUInt32BE(h.at + 8), length: buf.readUInt32BE(h.at + 12) };
}

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

/** The frame rate ffmpeg reports for an MP4 track: samples per the sum of their durations, reduced. */
function rateOf(timescale: number, samples: number, stts: Box | undefined, buf: Buffer): string | null {
  if (!stts) return null;
  const count = buf.readUInt32BE(stts.start + 4);
  let ticks = 0;
  for (let i = 0, at = stts.start + 8; i < count && at + 8 <= stts.end; i++, at += 8) ticks += buf.readUInt32BE(at) * buf.readUInt32BE(at + 4);
  const num = timescale * samples;
  if (!ticks || !num) return null;
  const d = gcd(num, ticks);
  return `${num / d}/${ticks / d}`;
}

/**
 * A track's duration as ffmpeg gives it: its edit list's one segment when it has one (an encoder's
 * delay or an AAC priming cut), else its media header's. Undefined for an edit list of several
 * segments or an empty edit (ffmpeg's own arithmetic; the container's duration serves instead).
 */
function trackDuration(buf: Buffer, trak: Box, media: { timescale: number; length: number }, movieTimescale: number): number | undefined {
  const edts = child(buf, trak, 'edts');
  const elst = edts && child(buf, edts, 'elst');
  if (!elst) return media.timescale ? media.length / media.timescale : undefined;
  const h = full(buf, elst);
  if (buf.readUInt32BE(h.at) !== 1) return undefined;
  const [segment, mediaTime] = h.version === 1 ? [Number(buf.readBigUInt64BE(h.at + 4)), Number(buf.readBigInt64BE(h.at + 12))] : [buf.readUInt32BE(h.at + 4), buf.readInt32BE(h.at + 8)];
  if (mediaTime < 0) return undefined;
  if (segment === 0) return media.timescale ? media.length / media.timescale : undefined;
  return segment / movieTimescale;
}

/** Whether a track header's matrix leaves the picture as it is stored (no rotation, no flip); false without one. */
function upright(buf: Buffer, trak: Box): boolean {
  const tkhd = child(buf, trak, 'tkhd');
  if (!tkhd) return false;
  const h = full(buf, tkhd);
  const matrix = h.at + (h.version === 1 ? 32 : 20) + 16;
  if (matrix + 36 > tkhd.end) return false;
  const [a, b, , c, d] = [0, 1, 2, 3, 4].map((i) => buf.readInt32BE(matrix + 4 * i));
  return a! > 0 && b === 0 && c === 0 && d! > 0;
}

/** Whether a visual sample entry's pixel aspect box (`pasp`), if it has one, says square pixels. */
function squarePixels(buf: Buffer, entry: Box): boolean {
  // a VisualSampleEntry's own fields take 78 bytes; its boxes (avcC, pasp, colr…) follow
  const pasp = children(buf, { start: entry.start + 78, end: entry.end }).find((b) => b.type === 'pasp');
  if (!pasp) return true;
  if (pasp.end - pasp.start < 8) return false;
  return buf.readUInt32BE(pasp.start) === buf.readUInt32BE(pasp.start + 4);
}

/** The tracks and duration a `moov` payload describes; null when any part is missing or malformed. */
function parseMoov(buf: Buffer): Mp4Index | null {
  try {
    const moov: Box = { type: 'moov', start: 0, end: buf.length };
    // a fragmented file keeps its samples and duration outside the index
    if (child(buf, moov, 'mvex')) return null;
    const mvhd = child(buf, moov, 'mvhd');
    if (!mvhd) return null;
    const movie = timing(buf, mvhd);
    if (!movie.timescale || !movie.length) return null;
    const tracks: Mp4Track[] = [];
    for (const trak of children(buf, moov).filter((b) => b.type === 'trak')) {
      const mdia = child(buf, trak, 'mdia');
      const mdhd = mdia && child(buf, mdia, 'mdhd');
      const hdlr = mdia && child(buf, mdia, 'hdlr');
      const stbl = mdia && child(buf, mdia, 'minf') && child(buf, child(buf, mdia, 'minf')!, 'stbl');
      const stsd = stbl && child(buf, stbl, 'stsd');
      const stsz = stbl && (child(buf, stbl, 'stsz') ?? child(buf, stbl, 'stz2'));
      if (!mdhd || !hdlr || !stsd || !stsz) return null;
      const handler = buf.toString('latin1', hdlr.start + 8, hdlr.start + 12);
      const kind = handler === 'vide' ? 'video' : handler === 'soun' ? 'audio' : 'other';
      const entry = boxAt(buf, stsd.start + 8, stsd.end); // the first sample entry, after the entry count
      if (!entry) return null;
      const media = timing(buf, mdhd);
      const samples = buf.readUInt32BE(stsz.start + 8); // after version/flags and the size field
      // a VisualSampleEntry's width and height sit at 24 and 26
      const [width, height] = kind === 'video' && entry.end - entry.start >= 28 ? [buf.readUInt16BE(entry.start + 24), buf.readUInt16BE(entry.start + 26)] : [0, 0];
      if (kind === 'video' && (!width || !height || !samples || !media.timescale)) return null;
      // a turned or anamorphic picture is shown at another size than it is stored: ffprobe reports both
      if (kind === 'video' && (!upright(buf, trak) || !squarePixels(buf, entry))) return null;
      const rate = kind === 'video' ? rateOf(media.timescale, samples, child(buf, stbl, 'stts'), buf) : null;
      tracks.push({ kind, fourcc: entry.type, width, height, samples, duration: trackDuration(buf, trak, media, movie.timescale), rate });
    }
    return { duration: movie.length / movie.timescale, tracks };
  } catch {
    return null; // a box shorter than its fields: not an index we can read
  }
}

/** The `moov` payload an MP4 holds, and whether media data (`mdat`, `moof`) came before it in the file. */
interface MoovFound {
  moov: Buffer;
  afterMedia: boolean;
}

/**
 * Finds the index of an MP4 of `size` bytes, reading through `read` in chunks of `chunk` bytes
 * (boxes before the index are skipped by their headers): with the index at the front one read, at
 * the end usually two. Null for anything that does not open with `ftyp` or has no whole index.
 */
async function findMoov(read: ByteReader, size: number, opts: { chunk: number; maxReads: number }): Promise<MoovFound | null> {
  let cached: { start: number; buf: Buffer } = { start: 0, buf: Buffer.alloc(0) };
  let reads = 0;
  const bytes = async (start: number, length: number): Promise<Buffer | null> => {
    const end = Math.min(start + length, size);
    if (start >= cached.start && end <= cached.start + cached.buf.length) return cached.buf.subarray(start - cached.start, end - cached.start);
    if (++reads > opts.maxReads) return null;
    cached = { start, buf: await read(start, Math.min(Math.max(length, opts.chunk), size - start)) };
    return cached.buf.subarray(0, end - start);
  };
  try {
    let afterMedia = false;
    for (let at = 0; at + 8 <= size; ) {
      const head = await bytes(at, 16);
      const box = head && boxAt(head, 0, size - at, head.length);
      // an MP4 opens with its file-type box; anything else is left to ffprobe
      if (!box || (at === 0 && box.type !== 'ftyp')) return null;
      if (box.type === 'moov') {
        const length = box.end - box.start;
        if (length > MAX_MOOV_BYTES) return null;
        const moov = await bytes(at + box.start, length);
        return moov && moov.length === length ? { moov, afterMedia } : null;
      }
      if (box.type === 'mdat' || box.type === 'moof') afterMedia = true;
      at += box.end;
    }
    return null;
  } catch {
    return null;
  }
}

/** Finds and parses the index of an MP4 of `size` bytes (see findMoov). Null for anything that is not a whole MP4 index. */
export async function findMp4Index(read: ByteReader, size: number, opts: { chunk: number; maxReads: number }): Promise<Mp4Index | null> {
  const found = await findMoov(read, size, opts);
  return found && parseMoov(found.moov);
}

/** Runs `use` with a reader of the local file at `file` and its size. */
async function withFileReader<T>(file: string, use: (read: ByteReader, size: number) => Promise<T>): Promise<T> {
  const fh = await fs.open(file, 'r');
  try {
    const read: ByteReader = async (start, length) => {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await fh.read(buf, 0, length, start);
      return buf.subarray(0, bytesRead);
    };
    return await use(read, (await fh.stat()).size);
  } finally {
    await fh.close();
  }
}

const LOCAL_READS = { chunk: 64 * 1024, maxReads: 64 };

/** The index of the MP4 file at `file`; null when it cannot be read. */
export function readMp4File(file: string): Promise<Mp4Index | null> {
  return withFileReader(file, (read, size) => findMp4Index(read, size, LOCAL_READS));
}

/**
 * Whether the MP4 at `file` has its index before its media data and is not fragmented: a player
 * starts it before the whole file has arrived, which is what `-movflags +faststart` makes. False
 * for anything else, or anything this reader cannot tell.
 */
export function hasIndexInFront(file: string): Promise<boolean> {
  return withFileReader(file, async (read, size) => {
    const found = await findMoov(read, size, LOCAL_READS);
    // a fragmented file keeps its samples outside the index
    return !!found && !found.afterMedia && !child(found.moov, { type: 'moov', start: 0, end: found.moov.length }, 'mvex');
  });
}

const VIDEO_CODECS: Record<string, string> = { avc1: 'h264', avc3: 'h264', hvc1: 'hevc', hev1: 'hevc', av01: 'av1', vp09: 'vp9', vp08: 'vp8', mp4v: 'mpeg4' };
const AUDIO_CODECS: Record<string, string> = { mp4a: 'aac', 'ac-3': 'ac3', 'ec-3': 'eac3', Opus: 'opus', fLaC: 'flac', '.mp3': 'mp3', alac: 'alac' };

/**
 * What ffprobe says of an MP4 that the seek-reading steps use (duration, size, the streams' kinds,
 * codecs, picture sizes, frame counts and rates), from its index; null when a video track's codec
 * is one this table does not name (ffprobe then tells what it is).
 */
export function probeOfMp4Index(index: Mp4Index, size: number): ProbeResult | null {
  const streams: ProbeStream[] = [];
  for (const t of index.tracks) {
    if (t.kind === 'video') {
      const codec = VIDEO_CODECS[t.fourcc];
      if (!codec) return null;
      streams.push({ codec_type: 'video', codec_name: codec, width: t.width, height: t.height, avg_frame_rate: t.rate ?? '0/0', nb_frames: String(t.samples), duration: t.duration });
    } else if (t.kind === 'audio') {
      streams.push({ codec_type: 'audio', codec_name: AUDIO_CODECS[t.fourcc] ?? t.fourcc, nb_frames: String(t.samples), duration: t.duration });
    }
  }
  return { format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: index.duration, size }, streams };
}
