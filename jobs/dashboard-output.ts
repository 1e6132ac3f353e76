// What a finished job produced, in a form a page can show: each operation's view (operations/<name>/view.ts)
// picks media by its signed download_url or reads text outputs from the job's output file.
import type { EntityManager } from '@mikro-orm/core';
import type { Account } from '../accounts/entity';
import { findAccountJob } from './repository';
import type { Job } from './entity';
import { DomainError } from '../lib/errors';
import { OPERATIONS } from '../operations/registry';
import type { ApiDeps } from '../api/context';
import { jobResource, type JobResource } from './service';
import { storedOutput } from './outputs';
import type { JobOutputView } from '../operations/output-view';

/** Larger text outputs are offered for download only. */
const MAX_INLINE_BYTES = 5 * 1024 * 1024;

/** How to show a completed job's output: its operation's view decides. */
async function outputOf(deps: Pick<ApiDeps, 'storage'>, job: Job, resource: JobResource): Promise<JobOutputView> {
  if (resource.status !== 'completed') return { kind: 'none' };
  const readText = async (): Promise<string | null> => {
    const out = await storedOutput(deps.storage, job);
    return out.ok ? deps.storage.readOutputText(out.relative, MAX_INLINE_BYTES) : null;
  };
  try {
    const fileUrl = (name: string): string | null => resource.files.find((f) => f.name === name)?.url ?? null;
    return await OPERATIONS[job.jobType].show({ result: resource.result_data ?? {}, downloadUrl: resource.download_url ?? null, readText, fileUrl });
  } catch (err) {
    if (err instanceof SyntaxError) return { kind: 'unavailable', reason: 'The output file could not be read; use the download link.' };
    throw err;
  }
}

/** A job of the account with live progress and its output, or 404 (another account's job looks unknown). */
export async function jobWithOutput(em: EntityManager, deps: Pick<ApiDeps, 'orchestrator' | 'links' | 'storage'>, account: Account, jobId: string): Promise<{ job: JobResource; output: JobOutputView }> {
  const row = await findAccountJob(em, account.id, jobId);
  if (!row) throw DomainError.notFound(`No job with id ${jobId} in this account`);
  const job = await jobResource(deps, row);
  return { job, output: await outputOf(deps, row, job) };
}
