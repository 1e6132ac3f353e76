// A completed job's output as every surface serves it (download links, MCP resources, the dashboard,
// OpenAI-format answers): whether it is still there, and if not why, decided in one place.
import path from 'node:path';
import type { Job } from './entity';
import type { Storage } from '../engines/storage';
import { OPERATIONS } from '../operations/registry';

/** Content type of a result file, by extension. */
export const FILE_CONTENT_TYPES: Record<string, string> = {
  mp4: 'video/mp4',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  opus: 'audio/ogg',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  gif: 'image/gif',
  jpg: 'image/jpeg',
  json: 'application/json',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
  // and those the operations add
  ...Object.fromEntries(Object.values(OPERATIONS).flatMap((op: { outputTypes?: Record<string, string> }) => Object.entries(op.outputTypes ?? {}))),
};

export type StoredOutput =
  | { ok: true; relative: string; size: number; ext: string; contentType: string }
  /** none: the job has no output (not completed, or an operation without a file); expired: past its expires_at; missing: no longer stored. */
  | { ok: false; reason: 'none' | 'expired' | 'missing' };

/** The job's output file, if it still may and can be served. */
export async function storedOutput(storage: Storage, job: Pick<Job, 'status' | 'outputFile' | 'expiresAt'>, now = Date.now()): Promise<StoredOutput> {
  if (job.status !== 'completed' || !job.outputFile) return { ok: false, reason: 'none' };
  if (job.expiresAt && job.expiresAt.getTime() <= now) return { ok: false, reason: 'expired' };
  const size = await storage.outputSize(job.outputFile);
  if (size === null) return { ok: false, reason: 'missing' };
  const ext = path.extname(job.outputFile).slice(1).toLowerCase();
  return { ok: true, relative: job.outputFile, size, ext, contentType: FILE_CONTENT_TYPES[ext] ?? 'application/octet-stream' };
}

/**
 * The one byte range of a `Range` header over a file of `size` bytes: null to send the whole file
 * (no header, several ranges, another unit, or an If-Range this server cannot validate), 'unsatisfiable'
 * for a range that starts past the end.
 */
export function byteRange(header: string | undefined, size: number, ifRange?: string): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header || ifRange) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    // a suffix: the last n bytes
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    return size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
