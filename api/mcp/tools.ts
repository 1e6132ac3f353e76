// The MCP tools: one create tool per registry operation, plus info, jobs, account, batches and subscriptions. Every tool is
// a thin call into the domains' services, so validation, credits and errors are exactly REST's.
import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { JOB_TYPES, OPERATIONS, type AnyOperation } from '../../operations/registry';
import { SourceUrl } from '../../operations/fields';
import { VideoInfoSchema } from '../../lib/video-info';
import { AccountSchema, JobListSchema, JobSchema, ListJobsQuerySchema } from '../schemas';
import { accountSummary } from '../../accounts/service';
import { INFO_COST, readVideoInfo } from '../../info/service';
import { cancelJob, createJob, getJob, listJobs } from '../../jobs/service';
import { parseInput } from '../../lib/validation';
import { BatchCreatedSchema, BatchListSchema, BatchSchema, CreateBatchSchema } from '../../batches/schemas';
import { cancelBatch, createBatch, getBatch, listBatches } from '../../batches/service';
import { CreateSubscriptionSchema, SubscriptionListSchema, SubscriptionSchema } from '../../subscriptions/schemas';
import { checkSubscriptionNow, createSubscription, deleteSubscription, getSubscription, listSubscriptions, updateSubscription } from '../../subscriptions/service';
import { PageQuerySchema } from '../schemas';
import { jobToolResult, waitForJob, type McpCaller } from './job-results';
import { toolInputSchema, toolOutputSchema, WaitSecondsSchema, type JsonSchema } from './tool-schemas';

/** What a running tool may use of its MCP request. */
export interface ToolCall {
  signal: AbortSignal;
  /** Sends a progress notification (0–100); absent when the client sent no progressToken. */
  progress?: (progress: number, message: string) => Promise<void>;
}

export interface ToolDefinition {
  tool: Tool;
  run(caller: McpCaller, args: Record<string, unknown>, call: ToolCall): Promise<CallToolResult>;
}

// openWorldHint defaults to true and destructiveHint to true (MCP spec), so both are stated everywhere.
const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Reads a URL on the internet and changes nothing (it costs a credit, which is not a change in the world). */
const READS_URL: ToolAnnotations = { readOnlyHint: true, openWorldHint: true };
const FETCHES_URL: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

/** A result whose structured content is `value`, with its JSON as text for clients that read only text. */
function structured(value: object): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value as Record<string, unknown> };
}

const JobIdArgs = z.strictObject({ job_id: z.string({ error: 'is required' }).meta({ description: 'The job_id a create tool returned' }) });
const InfoArgs = z.strictObject({ url: SourceUrl });
const NoArgs = z.strictObject({});
const BatchIdArgs = z.strictObject({ batch_id: z.string({ error: 'is required' }).meta({ description: 'The batch_id start_batch returned' }) });
const BatchPageArgs = BatchIdArgs.extend(PageQuerySchema.shape);
const SubscriptionIdArgs = z.strictObject({ subscription_id: z.string({ error: 'is required' }).meta({ description: 'The subscription_id create_subscription returned' }) });
const SubscriptionUpdateArgs = z.strictObject({
  subscription_id: SubscriptionIdArgs.shape.subscription_id,
  paused: z.boolean().optional().meta({ description: 'true pauses the checks, false resumes them' }),
  check_every: z.number().int().optional().meta({ description: 'Seconds between checks, at least the server\'s minimum (900 by default)' }),
  parameters: z.record(z.string(), z.unknown()).optional().meta({ description: "The operation's fields for items found from now on" }),
});
const CHANGES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

/**
 * A tool whose arguments `args` validates (REST's 422 sentences on failure) and describes, unless
 * `inputSchema` describes them instead.
 */
function defineTool<S extends z.ZodType>(
  name: string,
  meta: { title: string; description: string; annotations: ToolAnnotations; inputSchema?: JsonSchema; output: z.ZodType },
  args: S,
  run: (caller: McpCaller, args: z.output<S>, call: ToolCall) => Promise<CallToolResult>,
): ToolDefinition {
  return {
    tool: {
      name,
      title: meta.title,
      description: meta.description,
      inputSchema: (meta.inputSchema ?? toolInputSchema(args)) as Tool['inputSchema'],
      outputSchema: toolOutputSchema(meta.output) as Tool['outputSchema'],
      annotations: { title: meta.title, ...meta.annotations },
    },
    run: (caller, raw, call) => run(caller, parseInput(args, raw), call),
  };
}

/** `download_media`, `create_preview`, …: create the job, wait for it with progress, return its result. */
function createTool(op: AnyOperation): ToolDefinition {
  const description =
    `${op.summary}. Costs ${op.costText} (refunded if the job fails). Runs as a job: waits up to wait_seconds for it, ` +
    'reporting progress, then returns result_data and download_url (text outputs inline, small images as images), ' +
    'or the job_id to follow with get_job.';
  // wait_seconds is checked here; everything else goes to createJob as the body of the REST call.
  const args = WaitSecondsSchema.loose();
  return defineTool(op.mcp.tool, { title: op.mcp.title, description, annotations: FETCHES_URL, inputSchema: toolInputSchema(op.request, WaitSecondsSchema), output: JobSchema }, args, async (caller, { wait_seconds, ...request }, call) => {
    const created = await createJob(caller.em, caller.deps, caller.account, op.jobType, request);
    const report = call.progress;
    const job = await waitForJob(caller, created.job_id, wait_seconds, call.signal, report && ((p, j) => report(p, `${op.title} job ${j.job_id}: ${j.status}`)));
    return jobToolResult(caller, job, { failedIsError: true });
  });
}

const otherTools: ToolDefinition[] = [
  defineTool(
    'get_video_info',
    {
      title: 'Get video info',
      description: `Metadata and formats of a video or audio URL (title, duration, formats, …), read synchronously. Costs ${INFO_COST} credit, charged only when it answers.`,
      annotations: READS_URL,
      output: VideoInfoSchema,
    },
    InfoArgs,
    async (caller, { url }) => structured(await readVideoInfo(caller.em, caller.deps, caller.account, url)),
  ),
  defineTool(
    'get_job',
    { title: 'Get a job', description: 'A job by job_id: status, progress, result_data, download_url, error_message; a completed text output (transcript, comments) inline. Free.', annotations: READ, output: JobSchema },
    JobIdArgs,
    async (caller, { job_id }) => jobToolResult(caller, await getJob(caller.em, caller.deps, caller.account.id, job_id), { failedIsError: false }),
  ),
  defineTool(
    'list_jobs',
    { title: 'List jobs', description: 'The account\'s jobs, newest first, a page at a time (pass next_cursor back as cursor); filter by status or job_type. Free.', annotations: READ, output: JobListSchema },
    ListJobsQuerySchema,
    async (caller, q) => structured(await listJobs(caller.em, caller.deps, caller.account, { status: q.status, jobType: q.job_type, cursor: q.cursor, limit: q.limit })),
  ),
  defineTool(
    'cancel_job',
    {
      title: 'Cancel a job',
      description: 'Cancels a pending or processing job: it ends failed with "cancelled by the client" and its credits are refunded. A finished job cannot be cancelled. Free.',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      output: JobSchema,
    },
    JobIdArgs,
    async (caller, { job_id }) => {
      const { ended, job } = await cancelJob(caller.em, caller.deps, caller.account, job_id);
      const result = structured(job);
      const note = ended ? `Job ${job.job_id} was cancelled: it is now ${job.status}.` : `Cancellation of job ${job.job_id} was requested; it is still ${job.status} and ends shortly (see get_job).`;
      return { ...result, content: [{ type: 'text', text: note }, ...result.content] };
    },
  ),
  defineTool(
    'get_account',
    {
      title: 'Get the account',
      description: 'The account behind the API key: plan, rate limit per minute, credit balance, monthly allowance, next top-up, credits used this month by job type, and jobs running and queued. Free.',
      annotations: READ,
      output: AccountSchema,
    },
    NoArgs,
    async (caller) => structured(await accountSummary(caller.em, caller.account, JOB_TYPES)),
  ),
];

/** Batches and subscriptions: each a thin call into its service, as REST's. */
const collectionTools: ToolDefinition[] = [
  defineTool(
    'start_batch',
    {
      title: 'Start a batch',
      description: 'Runs one operation on every item of a podcast feed, playlist, channel, page with several videos, or a list of URLs: each item becomes an ordinary job with its own charge (refunded if it fails). operation "list" only lists the items (1 credit). Returns the batch_id at once; follow it with get_batch.',
      annotations: FETCHES_URL,
      output: BatchCreatedSchema,
    },
    CreateBatchSchema,
    async (caller, body) => structured(await createBatch(caller.em, caller.deps, caller.account, body)),
  ),
  defineTool(
    'get_batch',
    { title: 'Get a batch', description: "A batch by batch_id: status, counts by item status, and a page of its items (url, title, date, status, job_id, reason); pass next_cursor back as cursor. Free.", annotations: READ, output: BatchSchema },
    BatchPageArgs,
    async (caller, { batch_id, cursor, limit }) => structured(await getBatch(caller.em, caller.account, batch_id, { cursor, limit })),
  ),
  defineTool(
    'list_batches',
    { title: 'List batches', description: "The account's batches, newest first, with their counts. Free.", annotations: READ, output: BatchListSchema },
    PageQuerySchema,
    async (caller, q) => structured(await listBatches(caller.em, caller.account, q)),
  ),
  defineTool(
    'cancel_batch',
    { title: 'Cancel a batch', description: "Cancels a batch's unfinished items (each job refunded once); finished items stay. Free.", annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false }, output: BatchSchema },
    BatchIdArgs,
    async (caller, { batch_id }) => structured((await cancelBatch(caller.em, caller.deps, caller.account, batch_id)).batch),
  ),
  defineTool(
    'create_subscription',
    {
      title: 'Subscribe to a channel, playlist or feed',
      description: 'Checks the source every check_every seconds and runs the operation on each item published after start_after, once. Free; each item job costs its operation\'s price.',
      annotations: FETCHES_URL,
      output: SubscriptionSchema,
    },
    CreateSubscriptionSchema,
    async (caller, body) => structured(await createSubscription(caller.em, caller.deps, caller.account, body)),
  ),
  defineTool(
    'list_subscriptions',
    { title: 'List subscriptions', description: "The account's subscriptions: paused, last and next check, last error, items seen and run. Free.", annotations: READ, output: SubscriptionListSchema },
    PageQuerySchema,
    async (caller, q) => structured(await listSubscriptions(caller.em, caller.account, q)),
  ),
  defineTool(
    'update_subscription',
    { title: 'Pause, resume or change a subscription', description: 'Sets paused, check_every, or the parameters of items found from now on. Free.', annotations: CHANGES, output: SubscriptionSchema },
    SubscriptionUpdateArgs,
    async (caller, { subscription_id, ...changes }) => structured(await updateSubscription(caller.em, caller.deps, caller.account, subscription_id, changes)),
  ),
  defineTool(
    'check_subscription',
    { title: 'Check a subscription now', description: 'Runs a check now, besides the schedule. Free.', annotations: CHANGES, output: SubscriptionSchema },
    SubscriptionIdArgs,
    async (caller, { subscription_id }) => structured(await checkSubscriptionNow(caller.em, caller.deps, caller.account, subscription_id)),
  ),
  defineTool(
    'delete_subscription',
    { title: 'Delete a subscription', description: 'Removes the subscription, its schedule and its archive of seen items; batches it made stay. Free.', annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }, output: z.object({ deleted: z.string() }) },
    SubscriptionIdArgs,
    async (caller, { subscription_id }) => {
      await deleteSubscription(caller.em, caller.deps, caller.account, subscription_id);
      return structured({ deleted: subscription_id });
    },
  ),
  defineTool(
    'get_subscription',
    { title: 'Get a subscription', description: 'A subscription by subscription_id. Free.', annotations: READ, output: SubscriptionSchema },
    SubscriptionIdArgs,
    async (caller, { subscription_id }) => structured(await getSubscription(caller.em, caller.account, subscription_id)),
  ),
];

/** Every tool: the registry's operations first (a new operation becomes a tool by itself), then the rest. */
export const TOOLS: readonly ToolDefinition[] = [...Object.values(OPERATIONS).map(createTool), ...otherTools, ...collectionTools];
export const TOOLS_BY_NAME = new Map(TOOLS.map((t) => [t.tool.name, t]));
