// One account's burst, measured from another account's side, on a running `serve`: the noisy
// neighbour test and the bench row share it. Job state is read from serve's database, not the API,
// so the measurement itself never meets a key's per-minute limit.
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { querySqlite } from './ledger';
import { cli, waitFor } from './processes';
import type { ServeStack } from './serve-stack';

export interface JobRow {
  id: string;
  status: string;
  created_at: number;
  completed_at: number | null;
}

export interface Neighbour {
  accountId: string;
  key: string;
}

/** A second account with a key, made with the operator CLI. */
export async function createNeighbour(s: ServeStack, plan: string): Promise<Neighbour> {
  const accountId = (await cli(s.env, 'accounts', 'create', '--name', `neighbour on ${plan}`, '--plan', plan)).pop()!;
  return { accountId, key: (await cli(s.env, 'keys', 'create', '--account', accountId, '--name', 'neighbour key')).pop()! };
}

export const serveDatabase = (s: ServeStack): string => path.join(s.dataDir, 'mediasvc.sqlite');

export function jobRows(s: ServeStack, ids: string[]): Promise<JobRow[]> {
  return querySqlite<JobRow>(serveDatabase(s), `select id, status, created_at, completed_at from jobs where id in (${ids.map(() => '?').join(',')})`, ids);
}

/** Waits until every job has ended (completed or failed); their rows. */
export function waitJobsEnded(s: ServeStack, what: string, ids: string[], timeoutMs: number): Promise<JobRow[]> {
  return waitFor(
    what,
    async () => {
      const rows = await jobRows(s, ids);
      return rows.length === ids.length && rows.every((r) => r.status === 'completed' || r.status === 'failed') ? rows : undefined;
    },
    timeoutMs,
    500,
  );
}

/** Creates a job with the account's key; its id. */
export async function postJob(s: ServeStack, account: Neighbour, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${s.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  assert.equal(res.status, 202, `POST ${path}: ${res.status} ${text}`);
  return (JSON.parse(text) as { job_id: string }).job_id;
}

/** Creates `count` jobs on the account, one request after another; their ids. */
export async function submitBurst(s: ServeStack, account: Neighbour, count: number, path: string, body: Record<string, unknown>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await postJob(s, account, path, body));
  return ids;
}

/** The neighbour's 5 thumbnails of `sourceUrl`, created at once; their ids, and each one's seconds from creation to completion. */
export async function neighbourThumbnails(s: ServeStack, neighbour: Neighbour, sourceUrl: string): Promise<{ ids: string[]; seconds: number[] }> {
  const ids = await Promise.all([1, 2, 3, 4, 5].map((i) => postJob(s, neighbour, '/v1/preview', { url: sourceUrl, preview_type: 'thumbnail', timestamp: String(i / 4) })));
  const rows = await waitJobsEnded(s, "the neighbour's thumbnails", ids, 600_000);
  assert.deepEqual(rows.map((r) => r.status), Array(5).fill('completed'), JSON.stringify(rows));
  return { ids, seconds: ids.map((id) => rows.find((r) => r.id === id)!).map((r) => (Number(r.completed_at) - Number(r.created_at)) / 1000) };
}

/**
 * Where each job's time went, from its workflow history: for every task, how long it waited in its
 * queue (scheduled → started) and how long it ran, e.g. "claimRunningSlot 12+40 resolveSource 3100+220 …" (ms).
 */
export async function historyBreakdown(s: ServeStack, jobIds: string[], opts: { workflowId?: (jobId: string) => string; since?: (jobId: string) => number } = {}): Promise<string[]> {
  const workflowId = opts.workflowId ?? ((id: string) => `job-${id}`);
  const connection = await Connection.connect({ address: `127.0.0.1:${s.env.TEMPORAL_DEV_PORT}` });
  try {
    const client = new Client({ connection });
    return await Promise.all(
      jobIds.map(async (id) => {
        const events = (await client.workflow.getHandle(workflowId(id)).fetchHistory()).events ?? [];
        const at = (e: (typeof events)[number]) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.round((e.eventTime?.nanos ?? 0) / 1e6);
        const byId = new Map(events.map((e) => [Number(e.eventId), e]));
        // when the workflow started, from the reference time (a job's completion, for its deliveries)
        const steps: string[] = opts.since && events[0] ? [`started ${at(events[0]) - opts.since(id)}`] : [];
        for (const e of events) {
          const started = e.activityTaskStartedEventAttributes ?? e.workflowTaskStartedEventAttributes;
          if (!started) continue;
          const scheduled = byId.get(Number(started.scheduledEventId));
          if (!scheduled) continue;
          const name = scheduled.activityTaskScheduledEventAttributes?.activityType?.name ?? 'wft';
          const ended = events.find((x) => Number((x.activityTaskCompletedEventAttributes ?? x.activityTaskFailedEventAttributes ?? x.workflowTaskCompletedEventAttributes)?.startedEventId) === Number(e.eventId));
          steps.push(`${name} ${at(e) - at(scheduled)}+${ended ? at(ended) - at(e) : '?'}`);
        }
        return `${id.slice(0, 8)}: ${steps.join(' ')}`;
      }),
    );
  } finally {
    await connection.close();
  }
}
