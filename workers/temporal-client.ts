import crypto from 'node:crypto';
import { Client, Connection, WorkflowFailedError, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, defaultPayloadConverter, TimeoutFailure } from '@temporalio/common';
import { InfoError, jobWorkflowId, type Orchestrator } from '../api/services/orchestrator';
import { FAILURE_TYPES, type ProgressDetails } from '../lib/jobs';
import type { VideoInfo } from '../lib/video-info';
import type { infoWorkflow, mediaJobWorkflow } from '../workflows';

/** Opens a client connection to the Temporal frontend. */
export async function connectTemporal(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  return new Client({ connection, namespace });
}

/** How long a job's live progress read from Temporal is reused. */
const PROGRESS_TTL_MS = 1_000;
const progressCache = new Map<string, { at: number; value: Promise<number | null> }>();

/** The highest progress heartbeated by the job's running activities, or null. */
async function describeProgress(client: Client, jobId: string): Promise<number | null> {
  try {
    const desc = await client.workflow.getHandle(jobWorkflowId(jobId)).describe();
    let best: number | null = null;
    for (const act of desc.raw.pendingActivities ?? []) {
      const payload = act.heartbeatDetails?.payloads?.[0];
      if (!payload) continue;
      const details = defaultPayloadConverter.fromPayload<ProgressDetails | undefined>(payload);
      if (typeof details?.progress === 'number') best = Math.max(best ?? 0, details.progress);
    }
    return best;
  } catch {
    return null;
  }
}

/** The API's job engine over a Temporal client; workflows are started by type, so their arguments are checked. */
export function createTemporalOrchestrator(client: Client, opts: { infoTimeoutSeconds: number }): Orchestrator {
  const orchestrator: Orchestrator = {
    async startJob(input) {
      try {
        await client.workflow.start<typeof mediaJobWorkflow>('mediaJobWorkflow', {
          taskQueue: 'control',
          workflowId: jobWorkflowId(input.jobId),
          args: [input],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
        return true;
      } catch (err) {
        if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') return false;
        throw err;
      }
    },

    async cancelJob(input) {
      await orchestrator.startJob(input);
      try {
        await client.workflow.getHandle(jobWorkflowId(input.jobId)).cancel();
        return true;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError || /already completed/i.test((err as Error).message)) return false;
        throw err;
      }
    },

    async fetchInfo(url): Promise<VideoInfo> {
      try {
        return await client.workflow.execute<typeof infoWorkflow>('infoWorkflow', {
          taskQueue: 'media-info',
          workflowId: `info-${crypto.randomUUID()}`,
          args: [url],
          workflowExecutionTimeout: `${opts.infoTimeoutSeconds} seconds`,
        });
      } catch (err) {
        throw toInfoError(err);
      }
    },

    jobProgress(jobId) {
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
    if (cur.type === FAILURE_TYPES.unsupported) return new InfoError('unsupported', cur.message);
    if (cur.type === FAILURE_TYPES.unavailable) return new InfoError('unavailable', cur.message);
    if (cur.type === FAILURE_TYPES.rejected) return new InfoError('rejected', cur.message);
    return new InfoError('failed', cur.message);
  }
  if (cur instanceof TimeoutFailure || (err instanceof WorkflowFailedError && /timed out/i.test(err.message))) {
    return new InfoError('timeout', 'Reading the source metadata took too long');
  }
  return new InfoError('failed', cur instanceof Error ? cur.message : String(cur));
}
