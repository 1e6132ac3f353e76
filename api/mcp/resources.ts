// MCP resources: `job://{job_id}` (the Job resource as JSON) and `job://{job_id}/output` (a text
// output: transcript, translation, comments JSON, hashes), for the key's own account only.
import type { ListResourcesResult, ReadResourceResult, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { listJobs, getJob } from '../../jobs/service';
import { DomainError } from '../../lib/errors';
import { isTextOutput, jobOutputFile, outputText, outputUri, type McpCaller } from './job-results';

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  { uriTemplate: 'job://{job_id}', name: 'job', title: 'A job', description: 'The Job resource: status, progress, parameters, result_data, download_url, error_message', mimeType: 'application/json' },
  {
    uriTemplate: 'job://{job_id}/output',
    name: 'job-output',
    title: 'A job\'s text output',
    description: 'The whole output file of a completed transcribe, translate, get_comments or fingerprint job (JSON, SRT or VTT)',
  },
];

/** How many of the newest jobs resources/list names. */
const LISTED_JOBS = 20;

export async function listResources(caller: McpCaller): Promise<ListResourcesResult> {
  const { items } = await listJobs(caller.em, caller.deps, caller.account, { limit: LISTED_JOBS });
  return {
    resources: items.map((j) => ({ uri: `job://${j.job_id}`, name: `${j.job_type} job ${j.job_id}`, description: `${j.job_type}, ${j.status}, created ${j.created_at}`, mimeType: 'application/json' })),
  };
}

export async function readResource(caller: McpCaller, uri: string): Promise<ReadResourceResult> {
  const m = /^job:\/\/([^/]+)(\/output)?$/.exec(uri);
  if (!m) throw DomainError.notFound(`Unknown resource ${uri}; resources are job://{job_id} and job://{job_id}/output`);
  const jobId = m[1]!;
  if (!m[2]) {
    const job = await getJob(caller.em, caller.deps, caller.account.id, jobId);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(job, null, 2) }] };
  }
  const out = await jobOutputFile(caller, jobId);
  if (!isTextOutput(out)) throw DomainError.invalid(`The output of job ${jobId} is media (${out.mimeType}), not text; fetch it from the job's download_url`);
  return { contents: [{ uri: outputUri(jobId), mimeType: out.mimeType, text: await outputText(caller, jobId, out) }] };
}
