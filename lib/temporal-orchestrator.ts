import crypto from 'node:crypto';
import { Client, Connection, WorkflowFailedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, defaultPayloadConverter, TimeoutFailure } from '@temporalio/common';
import { FAILURE_TYPES, TASK_QUEUES, type ProgressDetails, type VideoInfo } from './job.types';
import { InfoError, jobWorkflowId, type Orchestrator } from './orchestrator';

/** Opens a client connection to the Temporal frontend. */
export async function connectTemporal(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  return new Client({ connection, namespace });
}

/** Orchestrator over a Temporal client. */
export function createTemporalOrchestrator(client: Client, opts: { infoTimeoutSeconds: number }): Orchestrator {
  return {
    async startJob(input) {
      try {
        await client.workflow.start('mediaJobWorkflow', {
          taskQueue: TASK_QUEUES.control,
          workflowId: jobWorkflowId(input.jobId),
          args: [input],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
      } catch (err) {
        if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') return;
        throw err;
      }
    },

    async fetchInfo(url): Promise<VideoInfo> {
      try {
        return await client.workflow.execute('infoWorkflow', {
          taskQueue: TASK_QUEUES.control,
          workflowId: `info-${crypto.randomUUID()}`,
          args: [url],
          workflowExecutionTimeout: `${opts.infoTimeoutSeconds} seconds`,
        });
      } catch (err) {
        throw toInfoError(err);
      }
    },

    async jobProgress(jobId) {
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
    },
  };
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
