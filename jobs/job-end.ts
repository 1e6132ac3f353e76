// One wait for a job's end, for every caller that answers with a finished job: a cancel, the
// OpenAI-compatible routes, MCP tools. It waits on the job's workflow (Temporal long-polls its
// result), then reads the row the workflow wrote before it closed. Only while the engine cannot say
// (the workflow not started yet by the outbox, Temporal away) is the row read again, at most once a second.
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/core';
import type { Job } from './entity';
import type { Orchestrator } from './orchestrator';
import { findAccountJob } from './repository';

export const jobEnded = (job: Pick<Job, 'status'>): boolean => job.status === 'completed' || job.status === 'failed';

export interface JobEndWait {
  /** How long to wait at most. */
  seconds: number;
  /** Ends the wait early (the client has gone, the call was cancelled). */
  signal?: AbortSignal;
}

/** The job's row once it has ended; the row as it is when the wait is over first; null when there is no such job. */
export async function waitForJobEnd(em: EntityManager, orchestrator: Pick<Orchestrator, 'awaitJobEnd'>, accountId: string, jobId: string, wait: JobEndWait): Promise<Job | null> {
  const deadline = Date.now() + wait.seconds * 1000;
  // its own identity map: the caller's may hold the row as it was
  const fresh = em.fork();
  for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
    fresh.clear();
    const job = await findAccountJob(fresh, accountId, jobId);
    const left = deadline - Date.now();
    if (!job || jobEnded(job) || left <= 0 || wait.signal?.aborted) return job;
    const outcome = await orchestrator.awaitJobEnd(jobId, { timeoutMs: left, signal: wait.signal });
    // an abort ends the pause early; the loop then returns the row as it is
    if (outcome === 'unknown') await sleep(Math.min(delay, left), undefined, { signal: wait.signal }).catch(() => undefined);
  }
}
