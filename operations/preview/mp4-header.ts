import fs from 'node:fs/promises';

/** What an MP4's index (its `moov` box) says about the file's first video track. */
export interface Mp4Video {
  width: number;
  height: number;
  /** Seconds, as the movie header gives it. */
  duration: number;
  /** Samples of the video track: its frames. */
  frames: number;
}

/** Bigger indexes are not ours (a 30 s clip's is tens of KB): left to ffprobe. */
const MAX_MOOV_BYTES = 16 * 1024 * 1024;

interface Box {
  type: string;
  /** Start and end of the payload (after the header) in the buffer or file. */
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

/**
 * Reads the video size, duration and frame count from a `moov` box's payload; null when any part
 * is missing or malformed (the caller then asks ffprobe).
 */
function parseMoov(buf: Buffer): Mp4Video | null {
  try {
    const moov: Box = { type: 'moov', start: 0, end: buf.length };
    const mvhd = child(buf, moov, 'mvhd');
    if (!mvhd) return null;
    const m = full(buf, mvhd);
    const [timescale, length] = m.version === 1 ? [buf.readUInt32BE(m.at + 16), Number(buf.readBigUInt64BE(m.at + 20))] : [buf.readUInt32BE(m.at + 8), buf.readUInt32BE(m.at + 12)];
    if (!timescale) return null;
    for (const trak of children(buf, moov).filter((b) => b.type === 'trak')) {
      const mdia = child(buf, trak, 'mdia');
      const hdlr = mdia && child(buf, mdia, 'hdlr');
      if (!mdia || !hdlr || buf.toString('latin1', hdlr.start + 8, hdlr.start + 12) !== 'vide') continue;
      const minf = child(buf, mdia, 'minf');
      const stbl = minf && child(buf, minf, 'stbl');
      const stsd = stbl && child(buf, stbl, 'stsd');
      const stsz = stbl && (child(buf, stbl, 'stsz') ?? child(buf, stbl, 'stz2'));
      if (!stsd || !stsz) return null;
      // the first sample entry (after the entry count) is a VisualSampleEntry: width and height at 24 and 26
      const entry = boxAt(buf, stsd.start + 8, stsd.end);
      if (!entry || entry.end - entry.start < 28) return null;
      const width = buf.readUInt16BE(entry.start + 24);
      const height = buf.readUInt16BE(entry.start + 26);
      const frames = buf.readUInt32BE(stsz.start + 8); // sample count, after version/flags and the size field
      // a fragmented file keeps its samples and duration outside the index: ffprobe measures it
      if (!width || !height || !frames || !length) return null;
      return { width, height, duration: length / timescale, frames };
    }
    return null;
  } catch {
    return null; // a box shorter than its fields: not an index we can read
  }
}

/** The index of the MP4 file at `file`, read without decoding anything; null when it cannot be read. */
export async function readMp4Video(file: string): Promise<Mp4Video | null> {
  const fh = await fs.open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const head = Buffer.alloc(16);
    for (let at = 0; at + 8 <= size; ) {
      const { bytesRead } = await fh.read(head, 0, 16, at);
      const box = boxAt(head, 0, size - at, bytesRead);
      if (!box) return null;
      if (box.type === 'moov') {
        const length = box.end - box.start;
        if (length > MAX_MOOV_BYTES) return null;
        const moov = Buffer.alloc(length);
        await fh.read(moov, 0, length, at + box.start);
        return parseMoov(moov);
      }
      at += box.end;
    }
    return null;
  } finally {
    await fh.close();
  }
}
