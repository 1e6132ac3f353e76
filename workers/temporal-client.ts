import crypto from 'node:crypto';
import net from 'node:net';
import { Client, Connection, ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, WorkflowFailedError, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, defaultPayloadConverter, TimeoutFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { InfoError, jobWorkflowId, type Orchestrator } from '../jobs/orchestrator';
import { dependencyFault } from '../lib/dependency-faults';
import { PLATFORM_REFUSED_TYPE, userFailureKind } from '../lib/job-failure';
import type { ProgressDetails } from '../lib/job-reports';
import { accountPriority } from '../lib/plans';
import { TASK_QUEUES } from '../lib/queues';
import { ACCOUNT_ID, JOB_ID, JOB_STATUS, JOB_TYPE, SEARCH_ATTRIBUTES } from '../lib/search-attributes';
import type { VideoInfo } from '../lib/video-info';
import type { batchWorkflow, infoWorkflow, mediaJobWorkflow } from '../workflows';
import { batchWorkflowId, CANCEL_BATCH_SIGNAL } from '../batches/types';
import { subscriptionScheduleId } from '../subscriptions/types';

/** Opens a client connection to the Temporal frontend. */
export async function connectTemporal(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  return new Client({ connection, namespace });
}

/**
 * Registers the job search attributes (JobId, AccountId, JobType, JobStatus) on the namespace when
 * they are missing, as `temporal operator search-attribute create` would. False when they are not
 * there and cannot be added (no operator rights): jobs then start without them, and still run.
 */
export async function ensureSearchAttributes(client: Client, warn: (msg: string) => void): Promise<boolean> {
  const { connection, options: { namespace } } = client;
  const missing = async () => {
    const have = await connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set([...Object.keys(have.customAttributes ?? {}), ...Object.keys(have.systemAttributes ?? {})]);
    return SEARCH_ATTRIBUTES.filter((a) => !known.has(a.name));
  };
  try {
    const absent = await missing();
    if (!absent.length) return true;
    const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(absent.map((a) => [a.name, KEYWORD])) });
    } catch (err) {
      // another process (an API beside a control worker) may have added them at the same moment
      if ((await missing()).length) throw err;
    }
    return true;
  } catch (err) {
    warn(`job search attributes are not registered on namespace ${namespace} and could not be added (${(err as Error).message}); jobs start without them. See README, Operating.`);
    return false;
  }
}

/** Tasks waiting per task queue and kind, from the server's stats (cached 5 s: scrapes may be frequent). */
export function taskQueueBacklog(client: Client): () => Promise<{ queue: string; kind: 'workflow' | 'activity'; backlog: number }[]> {
  const kinds = [
    ['workflow', temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW],
    ['activity', temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY],
  ] as const;
  let cached: { at: number; value: Promise<{ queue: string; kind: 'workflow' | 'activity'; backlog: number }[]> } | null = null;
  const read = async () => {
    const rows = await Promise.all(
      TASK_QUEUES.flatMap((queue) =>
        kinds.map(async ([kind, taskQueueType]) => {
          const res = await client.connection.workflowService.describeTaskQueue({ namespace: client.options.namespace, taskQueue: { name: queue }, taskQueueType, reportStats: true });
          return { queue, kind, backlog: Number(res.stats?.approximateBacklogCount ?? 0) };
        }),
      ),
    );
    return rows;
  };
  return () => {
    if (!cached || Date.now() - cached.at > 5_000) cached = { at: Date.now(), value: read() };
    return cached.value;
  };
}

/** How long a job's live progress read from Temporal is reused. */
const PROGRESS_TTL_MS = 1_000;
const progressCache = new Map<string, { at: number; value: Promise<ProgressDetails | null> }>();

/** The highest progress heartbeated by the job's running activities, or null. */
/** Resolves once a TCP connection to `host:port` opens (then closes it); rejects when refused or not within `timeoutMs`. */
function acceptsConnections(address: string, timeoutMs: number): Promise<void> {
  const m = /^\[?(.+?)\]?:(\d+)$/.exec(address);
  if (!m) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: m[1], port: Number(m[2]), timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(new Error(`Temporal at ${address} did not accept a connection within ${timeoutMs} ms`));
    });
    socket.once('error', (err: NodeJS.ErrnoException) => reject(new Error(`Temporal at ${address} refused the connection (${err.code ?? err.message})`)));
  });
}

const DESCRIBE_DEADLINE_MS = 2_000;
/** Calls the API waits on (a cancel, a start) end within this, so a server that is down answers 503, never a hang. */
const CALL_DEADLINE_MS = 10_000;

async function describeProgress(client: Client, jobId: string): Promise<ProgressDetails | null> {
  try {
    // a job read waits this long at most for its live progress; a server that does not answer leaves the stored one
    const desc = await client.connection.withDeadline(Date.now() + DESCRIBE_DEADLINE_MS, () => client.workflow.getHandle(jobWorkflowId(jobId)).describe());
    let best: ProgressDetails | null = null;
    for (const act of desc.raw.pendingActivities ?? []) {
      const payload = act.heartbeatDetails?.payloads?.[0];
      if (!payload) continue;
      const details = defaultPayloadConverter.fromPayload<ProgressDetails | undefined>(payload);
      if (typeof details?.progress === 'number' && details.progress >= (best?.progress ?? 0)) best = details;
    }
    return best;
  } catch {
    return null;
  }
}

/** The API's job engine over a Temporal client; workflows are started by type, so their arguments are checked. */
export function createTemporalOrchestrator(client: Client, opts: { infoTimeoutSeconds: number; searchAttributes?: boolean }): Orchestrator {
  const orchestrator: Orchestrator = {
    async startJob(input) {
      const priority = accountPriority(input.accountId, input.plan, { jobsAhead: input.jobsAhead });
      try {
        await client.workflow.start<typeof mediaJobWorkflow>('mediaJobWorkflow', {
          taskQueue: 'control',
          workflowId: jobWorkflowId(input.jobId),
          args: [input],
          // the fairness key in the Temporal UI: which account's share this job's tasks are dispatched from
          memo: { source_url: input.sourceUrl, ...(priority ? { fairness_key: priority.fairnessKey, fairness_weight: priority.fairnessWeight, priority_key: priority.priorityKey, plan: input.plan ?? 'free' } : {}) },
          ...(opts.searchAttributes
            ? {
                typedSearchAttributes: [
                  { key: JOB_ID, value: input.jobId },
                  { key: JOB_TYPE, value: input.jobType },
                  { key: JOB_STATUS, value: 'pending' },
                  ...(input.accountId ? [{ key: ACCOUNT_ID, value: input.accountId }] : []),
                ],
              }
            : {}),
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          priority,
        });
        return true;
      } catch (err) {
        if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') return false;
        throw err;
      }
    },

    async startBatch(input) {
      try {
        await client.workflow.start<typeof batchWorkflow>('batchWorkflow', {
          taskQueue: 'control',
          workflowId: batchWorkflowId(input.batchId),
          args: [input],
          memo: { account_id: input.accountId, operation: input.operation, plan: input.plan },
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
      } catch (err) {
        if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
      }
    },

    async cancelBatch(batchId) {
      try {
        await client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () => client.workflow.getHandle(batchWorkflowId(batchId)).signal(CANCEL_BATCH_SIGNAL));
        return true;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError || /already completed/i.test((err as Error).message)) return false;
        throw err;
      }
    },

    async upsertSubscriptionSchedule(sub) {
      const scheduleId = subscriptionScheduleId(sub.subscriptionId);
      const spec = { intervals: [{ every: `${sub.checkEverySeconds} seconds` as const }] };
      const action = { type: 'startWorkflow' as const, workflowType: 'subscriptionCheckWorkflow', taskQueue: 'control', workflowId: `subscription-check-${sub.subscriptionId}`, args: [{ subscriptionId: sub.subscriptionId }] };
      const note = sub.paused ? 'paused by the account' : 'running';
      await client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, async () => {
        try {
          await client.schedule.create({
            scheduleId,
            spec,
            action,
            // a check still running when the next is due: the next is skipped, never run beside it
            policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
            state: { paused: sub.paused, note },
            memo: { account_id: sub.accountId, operation: sub.operation, url: sub.url },
          });
        } catch (err) {
          if (!(err instanceof ScheduleAlreadyRunning)) throw err;
          await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action, state: { ...prev.state, paused: sub.paused, note } }));
        }
      });
    },

    async deleteSubscriptionSchedule(subscriptionId) {
      try {
        await client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () => client.schedule.getHandle(subscriptionScheduleId(subscriptionId)).delete());
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      }
    },

    async triggerSubscriptionSchedule(subscriptionId) {
      await client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () => client.schedule.getHandle(subscriptionScheduleId(subscriptionId)).trigger(ScheduleOverlapPolicy.SKIP));
    },

    async pauseSchedule(scheduleId, note) {
      await client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () => client.schedule.getHandle(scheduleId).pause(note));
    },

    async cancelJob(input) {
      await client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () => orchestrator.startJob(input));
      try {
        await client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () => client.workflow.getHandle(jobWorkflowId(input.jobId)).cancel());
        return true;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError || /already completed/i.test((err as Error).message)) return false;
        throw err;
      }
    },

    async fetchInfo(url, caller): Promise<VideoInfo> {
      try {
        // the workflow's own timeout ends it; the deadline ends the wait when the server cannot say so
        return await client.connection.withDeadline(Date.now() + (opts.infoTimeoutSeconds + 10) * 1000, () => client.workflow.execute<typeof infoWorkflow>('infoWorkflow', {
          taskQueue: 'media-info',
          workflowId: `info-${crypto.randomUUID()}`,
          args: [url],
          priority: accountPriority(caller?.accountId, caller?.plan, { interactive: true }),
          workflowExecutionTimeout: `${opts.infoTimeoutSeconds} seconds`,
        }));
      } catch (err) {
        // Temporal itself not answering is a 503 for the caller, not a failed read of the source
        if (dependencyFault(err)?.dependency === 'temporal') throw err;
        throw toInfoError(err);
      }
    },

    async checkReachable() {
      // the client rides out a server that is away by retrying, so a probe must see a refusal itself
      const address = (client.connection as Partial<Connection>).options?.address;
      if (address) await acceptsConnections(address, 1500);
      await client.connection.workflowService.getSystemInfo({});
    },

    async jobProgress(jobId) {
      return (await orchestrator.jobDetails(jobId))?.progress ?? null;
    },

    async awaitJobEnd(jobId, { timeoutMs, signal }) {
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), timeoutMs);
      const onAbort = () => stop.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        // result() long-polls the workflow's history for its close: nothing is read until then
        await client.withAbortSignal(stop.signal, () => client.workflow.getHandle(jobWorkflowId(jobId)).result());
        return 'ended';
      } catch (err) {
        if (stop.signal.aborted) return 'running';
        // failed, cancelled, terminated or timed out: closed all the same
        if (err instanceof WorkflowFailedError) return 'ended';
        return 'unknown';
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
    },

    jobDetails(jobId) {
      // one describe() per job per PROGRESS_TTL_MS however many clients poll it (heartbeats are throttled to ~1 s anyway)
      const now = Date.now();
      const hit = progressCache.get(jobId);
      if (hit && now - hit.at < PROGRESS_TTL_MS) return hit.value;
      if (progressCache.size >= 10_000) progressCache.clear();
      const value = describeProgress(client, jobId);
      progressCache.set(jobId, { at: now, value });
      return value;
    },
  };
  return orchestrator;
}

function toInfoError(err: unknown): InfoError {
  let cur: unknown = err instanceof WorkflowFailedError ? err.cause : err;
  while (cur instanceof ActivityFailure && cur.cause) cur = cur.cause;
  if (cur instanceof ApplicationFailure) {
    return new InfoError(cur.type === PLATFORM_REFUSED_TYPE ? 'refused' : (userFailureKind(cur.type) ?? 'failed'), cur.message);
  }
  if (cur instanceof TimeoutFailure || (err instanceof WorkflowFailedError && /timed out/i.test(err.message))) {
    return new InfoError('timeout', 'Reading the source metadata took too long');
  }
  return new InfoError('failed', cur instanceof Error ? cur.message : String(cur));
}
