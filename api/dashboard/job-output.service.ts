// What a finished job produced, in a form a page can show: media by its signed download_url, text
// outputs (transcripts, translations, comments) read from the job's output file.
import type { EntityManager } from '@mikro-orm/core';
import type { Account } from '../../db/account.entity';
import { findAccountJob } from '../../db/jobs.repository';
import type { Job } from '../../db/job.entity';
import type { Comment } from '../../engines/comments/provider';
import { DomainError } from '../../lib/errors';
import type { ApiDeps } from '../context';
import { jobResource, type JobResource } from '../services/jobs.service';
import { storedOutput } from '../services/outputs.service';

/** Larger text outputs are offered for download only. */
const MAX_INLINE_BYTES = 5 * 1024 * 1024;
/** Top-level comments shown inline; the file has them all. */
export const MAX_INLINE_COMMENTS = 200;

const AUDIO_FORMATS = new Set(['mp3', 'wav', 'm4a', 'opus', 'ogg', 'flac', 'aac']);

export interface Segment {
  start: number | null;
  end: number | null;
  text: string;
  original?: string;
}

export type JobOutputView =
  | { kind: 'none' }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'image'; url: string; width: number | null; height: number | null; animated: boolean }
  | { kind: 'video'; url: string; width: number | null; height: number | null }
  | { kind: 'audio'; url: string }
  | { kind: 'transcript'; language: string | null; segments: Segment[] }
  | { kind: 'translation'; sourceLanguage: string | null; targetLanguage: string | null; segments: Segment[] }
  | { kind: 'comments'; title: string; comments: Comment[]; topLevelTotal: number }
  | { kind: 'hashes'; hashes: [string, string][] };

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** `HH:MM:SS,mmm`, `HH:MM:SS.mmm` or `MM:SS.mmm` → seconds. */
function cueTime(t: string): number | null {
  const m = /^(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})$/.exec(t.trim());
  if (!m) return null;
  return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]!.padEnd(3, '0')) / 1000;
}

/** The cues of an SRT or WebVTT file. */
export function parseCues(text: string): Segment[] {
  return text
    .replace(/\r/g, '')
    .split(/\n{2,}/)
    .map((block) => {
      const lines = block.split('\n');
      const at = lines.findIndex((l) => l.includes('-->'));
      if (at < 0) return null;
      const [from = '', to = ''] = lines[at]!.split('-->');
      return { start: cueTime(from), end: cueTime(to.trim().split(/\s+/)[0] ?? ''), text: lines.slice(at + 1).join(' ').trim() };
    })
    .filter((c): c is Segment => c !== null && c.text !== '');
}

async function readOutput(deps: Pick<ApiDeps, 'storage'>, job: Job): Promise<string | null> {
  const out = await storedOutput(deps.storage, job);
  return out.ok ? deps.storage.readOutputText(out.relative, MAX_INLINE_BYTES) : null;
}

function segmentsOf(json: unknown): Segment[] {
  const list = (json as { segments?: unknown }).segments;
  return Array.isArray(list)
    ? list.map((s: Record<string, unknown>) => ({ start: num(s.start), end: num(s.end), text: str(s.text) ?? '', ...(typeof s.original === 'string' ? { original: s.original } : {}) }))
    : [];
}

async function textOutput(deps: Pick<ApiDeps, 'storage'>, job: Job, resource: JobResource): Promise<JobOutputView> {
  const content = await readOutput(deps, job);
  if (content === null) return { kind: 'unavailable', reason: 'The output is too large to show here or no longer stored; use the download link.' };
  const r = resource.result_data ?? {};
  const format = str(r.output_format) ?? 'json';
  const segments = format === 'json' ? segmentsOf(JSON.parse(content)) : parseCues(content);
  if (job.jobType === 'transcribe') return { kind: 'transcript', language: str(r.language), segments };
  // SRT/VTT translations hold only the translated cues; the original is in result_data as one text.
  const aligned = format === 'json' ? segments : [{ start: null, end: null, original: str(r.original_text) ?? '', text: str(r.translated_text) ?? '' }];
  return { kind: 'translation', sourceLanguage: str(r.source_language), targetLanguage: str(r.target_language), segments: aligned };
}

async function commentsOutput(deps: Pick<ApiDeps, 'storage'>, job: Job): Promise<JobOutputView> {
  const content = await readOutput(deps, job);
  if (content === null) return { kind: 'unavailable', reason: 'The comments file is too large to show here or no longer stored; use the download link.' };
  const file = JSON.parse(content) as { title?: string; comments?: Comment[] };
  const comments = file.comments ?? [];
  return { kind: 'comments', title: file.title ?? '', comments: comments.slice(0, MAX_INLINE_COMMENTS), topLevelTotal: comments.length };
}

function mediaOutput(job: Job, resource: JobResource): JobOutputView {
  const url = resource.download_url;
  if (!url) return { kind: 'unavailable', reason: 'The output file has expired.' };
  const r = resource.result_data ?? {};
  const size = { width: num(r.width), height: num(r.height) };
  if (job.jobType === 'preview') {
    if (r.preview_type === 'clip') return { kind: 'video', url, ...size };
    return { kind: 'image', url, ...size, animated: r.preview_type === 'gif' };
  }
  return AUDIO_FORMATS.has(str(r.format) ?? '') ? { kind: 'audio', url } : { kind: 'video', url, width: null, height: null };
}

function unreadable(err: unknown): JobOutputView {
  if (err instanceof SyntaxError) return { kind: 'unavailable', reason: 'The output file could not be read; use the download link.' };
  throw err;
}

/** How to show a completed job's output. */
async function outputOf(deps: Pick<ApiDeps, 'storage'>, job: Job, resource: JobResource): Promise<JobOutputView> {
  if (resource.status !== 'completed') return { kind: 'none' };
  switch (job.jobType) {
    case 'preview':
    case 'download':
      return mediaOutput(job, resource);
    case 'transcribe':
    case 'translate':
      return textOutput(deps, job, resource).catch(unreadable);
    case 'comments':
      return commentsOutput(deps, job).catch(unreadable);
    case 'fingerprint': {
      const r = resource.result_data ?? {};
      return { kind: 'hashes', hashes: ['average_hash', 'perceptual_hash', 'difference_hash'].map((k): [string, string] => [k, str(r[k]) ?? '']) };
    }
  }
}

/** A job of the account with live progress and its output, or 404 (another account's job looks unknown). */
export async function jobWithOutput(em: EntityManager, deps: Pick<ApiDeps, 'orchestrator' | 'links' | 'storage'>, account: Account, jobId: string): Promise<{ job: JobResource; output: JobOutputView }> {
  const row = await findAccountJob(em, account.id, jobId);
  if (!row) throw DomainError.notFound(`No job with id ${jobId} in this account`);
  const job = await jobResource(deps, row);
  return { job, output: await outputOf(deps, row, job) };
}
