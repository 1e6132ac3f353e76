// A job as an MCP tool result: wait for it with progress, then its result data, download link and,
// where it helps an agent, the output itself (text inline, small images as images).
import type { EntityManager } from '@mikro-orm/core';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { Account } from '../../accounts/entity';
import { findAccountJob } from '../../jobs/repository';
import { DomainError } from '../../lib/errors';
import { OPERATIONS } from '../../operations/registry';
import type { OutputKind } from '../../operations/define';
import type { ApiDeps } from '../context';
import { getJob, type JobResource } from '../../jobs/service';
import { storedOutput } from '../../jobs/outputs';
import { waitForJobEnd } from '../../jobs/job-end';

/** Text outputs longer than this are cut (an agent's context is the limit), with a note and the link. */
export const INLINE_TEXT_MAX_CHARS = 20_000;
/** Image outputs up to this size come back as image content. */
export const INLINE_IMAGE_MAX_BYTES = 1024 * 1024;
/** How often a waiting tool call reads the job's progress for its notifications. */
const PROGRESS_EVERY_MS = 500;

/** Who is calling: the key's account, with the request's EntityManager. */
export interface McpCaller {
  deps: ApiDeps;
  em: EntityManager;
  account: Account;
}

export const outputUri = (jobId: string): string => `job://${jobId}/output`;

/**
 * Waits for the job to end (the one wait on its workflow), `seconds` pass or the call is cancelled,
 * reporting each rise in progress meanwhile (a completed job reports 100), so progress notifications
 * only ever increase.
 */
export async function waitForJob(
  caller: McpCaller,
  jobId: string,
  seconds: number,
  signal: AbortSignal,
  onProgress?: (progress: number, job: JobResource) => Promise<void>,
): Promise<JobResource> {
  let reported = -1;
  // A fresh EntityManager per read: the request's one would keep serving the first row it loaded.
  const read = async () => {
    const job = await getJob(caller.deps.orm.em.fork(), caller.deps, caller.account.id, jobId);
    const progress = job.status === 'completed' ? 100 : job.progress;
    if (onProgress && progress !== null && progress > reported) {
      reported = progress;
      await onProgress(progress, job);
    }
    return job;
  };
  let over = false;
  const end = waitForJobEnd(caller.em, caller.deps.orchestrator, caller.account.id, jobId, { seconds, signal }).finally(() => (over = true));
  // the progress a worker heartbeats, read while the wait runs (the end is the wait's, not this loop's)
  while (onProgress && !over) {
    await read();
    await Promise.race([end, new Promise((resolve) => setTimeout(resolve, PROGRESS_EVERY_MS))]);
  }
  await end;
  return read();
}

export interface JobOutputFile {
  /** Its path in storage. */
  relative: string;
  mimeType: string;
  size: number;
  kind: OutputKind;
}

/** The output file of a completed job of the caller's account; a DomainError says why there is none. */
export async function jobOutputFile(caller: McpCaller, jobId: string): Promise<JobOutputFile> {
  // a fresh EntityManager, like waitForJob: the row has usually just changed in a worker
  const job = await findAccountJob(caller.deps.orm.em.fork(), caller.account.id, jobId);
  if (!job) throw DomainError.notFound(`No job with id ${jobId} in this account`);
  if (job.status === 'failed') throw DomainError.notFound(`Job ${job.id} failed, so it has no output: ${job.errorMessage ?? ''}`);
  const out = await storedOutput(caller.deps.storage, job);
  if (!out.ok && out.reason === 'none') throw DomainError.notFound(`Job ${job.id} has no output yet: it is ${job.status}`);
  if (!out.ok && out.reason === 'expired') throw new DomainError('gone', `The output of job ${job.id} has expired; create a new job to get it again`);
  if (!out.ok) throw new DomainError('gone', `The output of job ${job.id} is no longer stored; create a new job to get it again`);
  return { relative: out.relative, mimeType: out.contentType, size: out.size, kind: OPERATIONS[job.jobType].output };
}

/** The output's text; gone between the check and the read, the same 410 as the check gives. */
export async function outputText(caller: McpCaller, jobId: string, out: JobOutputFile): Promise<string> {
  const text = await caller.deps.storage.readOutputText(out.relative);
  if (text === null) throw new DomainError('gone', `The output of job ${jobId} is no longer stored; create a new job to get it again`);
  return text;
}

/** Whether an output is text an agent can read inline (transcripts, translations, comments, hashes). */
export const isTextOutput = (out: JobOutputFile): boolean => out.kind === 'text' || out.kind === 'json';

function truncated(text: string, job: JobResource): string {
  if (text.length <= INLINE_TEXT_MAX_CHARS) return text;
  // never cut a surrogate pair in half
  const cut = /[\uD800-\uDBFF]/.test(text[INLINE_TEXT_MAX_CHARS - 1] ?? '') ? INLINE_TEXT_MAX_CHARS - 1 : INLINE_TEXT_MAX_CHARS;
  return `${text.slice(0, cut)}\n\n[truncated: the first ${cut.toLocaleString('en')} of ${text.length.toLocaleString('en')} characters are shown. ` +
    `The whole file: ${job.download_url} (no Authorization header needed), or read the resource ${outputUri(job.job_id)}]`;
}

/** The output as content blocks: the text (cut when large) with a link to the resource, an image, or nothing for other media. */
async function outputContent(caller: McpCaller, job: JobResource): Promise<ContentBlock[]> {
  const out = await jobOutputFile(caller, job.job_id);
  if (isTextOutput(out)) {
    const text = await outputText(caller, job.job_id, out);
    return [
      { type: 'text', text: truncated(text, job) },
      { type: 'resource_link', uri: outputUri(job.job_id), name: `output of job ${job.job_id}`, mimeType: out.mimeType, size: out.size },
    ];
  }
  if (out.mimeType.startsWith('image/') && out.size <= INLINE_IMAGE_MAX_BYTES) {
    const bytes = await caller.deps.storage.readOutput(out.relative, INLINE_IMAGE_MAX_BYTES);
    if (bytes) return [{ type: 'image', data: bytes.toString('base64'), mimeType: out.mimeType }];
  }
  return [];
}

/** The job's files after the first, each as a link to fetch it by (a storyboard's sprite, a download's subtitle files). */
function moreFiles(job: JobResource): ContentBlock[] {
  return job.files.slice(1).map((f) => ({ type: 'resource_link', uri: f.url, name: f.name, mimeType: f.content_type, ...(f.size === null ? {} : { size: f.size }) }));
}

/**
 * A job as a tool result; `structuredContent` is always the Job resource (job_id, status, progress,
 * result_data, download_url, …). A failed job leads with its error_message and, for the create
 * tools, is an error result.
 */
export async function jobToolResult(caller: McpCaller, job: JobResource, opts: { failedIsError: boolean }): Promise<CallToolResult> {
  const json: ContentBlock = { type: 'text', text: JSON.stringify(job, null, 2) };
  const structuredContent = job as unknown as Record<string, unknown>;
  if (job.status === 'completed') return { content: [json, ...(await outputContent(caller, job)), ...moreFiles(job)], structuredContent };
  if (job.status === 'failed') return { content: [{ type: 'text', text: job.error_message ?? 'The job failed' }, json], structuredContent, isError: opts.failedIsError };
  const progress = job.progress === null ? '' : ` (${job.progress}% done)`;
  return { content: [{ type: 'text', text: `Job ${job.job_id} is ${job.status}${progress}; call get_job with job_id "${job.job_id}" to follow it.` }, json], structuredContent };
}
