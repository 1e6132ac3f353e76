// A completed job's output as every surface serves it (download links, MCP resources, the dashboard,
// OpenAI-format answers): whether it is still there, and if not why, decided in one place.
import path from 'node:path';
import type { Job } from './entity';
import type { OutputFileEntry } from './types';
import type { Storage } from '../engines/storage';
import type { FileLinks } from '../lib/file-links';
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

/** The content type of a result file's name. */
export function contentTypeOf(name: string): string {
  return FILE_CONTENT_TYPES[path.extname(name).slice(1).toLowerCase()] ?? 'application/octet-stream';
}

/** What the job row records of its output files when it completes: each one's name, type and size (null for one that cannot be read, whose link then answers 410). */
export async function describeOutputs(storage: Storage, relatives: string[]): Promise<OutputFileEntry[]> {
  return Promise.all(
    relatives.map(async (relative) => {
      const name = path.posix.basename(relative);
      return { name, content_type: contentTypeOf(name), size: await storage.outputSize(relative) };
    }),
  );
}

/** One file of the Job resource's `files`. */
export interface JobFile {
  name: string;
  content_type: string;
  /** Bytes; null for a job that completed before sizes were recorded. */
  size: number | null;
  url: string;
}

/**
 * A completed job's files with their signed links, under the same rules as download_url (which is
 * the first one's link): none once the output has gone or before the job completes.
 */
export function jobFiles(job: Pick<Job, 'id' | 'status' | 'outputFile' | 'outputFiles' | 'expiresAt'>, links: FileLinks): JobFile[] {
  if (job.status !== 'completed' || !job.outputFile || !job.expiresAt) return [];
  const expiresAt = job.expiresAt;
  const name = path.posix.basename(job.outputFile);
  const entries: Omit<JobFile, 'url'>[] = job.outputFiles?.length ? job.outputFiles : [{ name, content_type: contentTypeOf(name), size: null }];
  return entries.map((f, i) => ({ name: f.name, content_type: f.content_type, size: f.size, url: i === 0 ? links.url(job.id, expiresAt) : links.fileUrl(job.id, expiresAt, f.name) }));
}

/** The stored path of the job's file called `name` (its first, outputFile, or one of the others), or null when it has none by that name. */
export function namedOutput(job: Pick<Job, 'outputFile' | 'outputFiles'>, name: string): string | null {
  if (!job.outputFile) return null;
  const dir = path.posix.dirname(job.outputFile);
  const names = job.outputFiles?.map((f) => f.name) ?? [path.posix.basename(job.outputFile)];
  return names.includes(name) ? path.posix.join(dir, name) : null;
}

/** Whether the job's text files name its other files by name (a storyboard: its WebVTT and JSON name the sprite). */
export function linksSiblings(job: Pick<Job, 'resultData' | 'outputFiles'>): boolean {
  return (job.outputFiles?.length ?? 0) > 1 && typeof job.resultData?.sprite === 'string';
}

/** Largest text file served with its siblings' links written in. */
export const LINKED_TEXT_MAX = 4 * 1024 * 1024;

/**
 * A text file whose links to the job's other files are bare names (`storyboard.jpg#xywh=0,0,160,90`
 * at a cue's start, `"url": "storyboard.jpg"` in JSON), with each made that file's signed link: the
 * files are written before the job's links exist.
 */
export function withSiblingLinks(text: string, files: Pick<JobFile, 'name' | 'url'>[]): string {
  let out = text;
  for (const f of files) {
    const name = f.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`(^|")${name}(?=#|")`, 'gm'), `$1${f.url}`);
  }
  return out;
}

export type StoredOutput =
  | { ok: true; relative: string; size: number; ext: string; contentType: string }
  /** none: the job has no output (not completed, or an operation without a file); expired: past its expires_at; missing: no longer stored. */
  | { ok: false; reason: 'none' | 'expired' | 'missing' };

/** The job's output file, if it still may and can be served. */
export async function storedOutput(storage: Storage, job: Pick<Job, 'status' | 'outputFile' | 'outputFiles' | 'expiresAt'>, now = Date.now(), name?: string): Promise<StoredOutput> {
  if (job.status !== 'completed' || !job.outputFile) return { ok: false, reason: 'none' };
  const relative = name === undefined ? job.outputFile : namedOutput(job, name);
  if (!relative) return { ok: false, reason: 'none' };
  if (job.expiresAt && job.expiresAt.getTime() <= now) return { ok: false, reason: 'expired' };
  const size = await storage.outputSize(relative);
  if (size === null) return { ok: false, reason: 'missing' };
  const ext = path.extname(relative).slice(1).toLowerCase();
  return { ok: true, relative, size, ext, contentType: contentTypeOf(relative) };
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
