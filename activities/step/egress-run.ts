import crypto from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { EgressRefusedError } from '../../engines/egress/address-check';
import type { EgressProxy, UnreachableHost } from '../../engines/egress/egress-proxy';
import { platformGate } from '../../engines/egress/platform-gate';
import { JobFailure } from '../../lib/job-failure';
import { keepAlive } from './heartbeat';

/** The job's failure for a refused destination: not retried, refunded, the refusal as its message. */
export function refusalFailure(err: EgressRefusedError): ApplicationFailure {
  return JobFailure.user('rejected', err.message);
}

/**
 * Runs one tool invocation under its own egress proxy run, holding a turn of the source's platform
 * (PLATFORM_CONCURRENCY). Any refused connection fails it with the
 * refusal, even if the tool carried on and exited 0 (e.g. skipped a segment, or fell back to
 * another format): a source that reaches for a private address is not served at all.
 */
export async function throughEgress<T>(egress: EgressProxy, sourceUrl: string, run: (proxyUrl: string) => Promise<T>): Promise<T> {
  const ctx = activityContext();
  // a step waiting for its platform's turn still heartbeats, and a cancel reaches it there
  const stop = ctx ? keepAlive() : () => undefined;
  try {
    return await platformGate().hold(sourceUrl, () => runThroughEgress(egress, run), ctx?.cancellationSignal);
  } finally {
    stop();
  }
}

/** The running activity, if a step is running (tests call steps' helpers bare). */
function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null;
  }
}

async function runThroughEgress<T>(egress: EgressProxy, run: (proxyUrl: string) => Promise<T>): Promise<T> {
  const runId = crypto.randomUUID();
  try {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await run(egress.urlFor(runId)) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const refused = egress.refusals(runId)[0];
    if (refused) throw refusalFailure(refused);
    if (!outcome.ok) throw unreachableFailure(egress.unreachable(runId)) ?? outcome.error;
    return outcome.value;
  } finally {
    egress.release(runId);
  }
}

// A name with no DNS answer, or a port nobody listens on, will not heal within a job's retries.
const PERMANENT: Record<string, string> = { ENOTFOUND: 'does not resolve (no DNS record)', ENODATA: 'does not resolve (no DNS record)', ECONNREFUSED: 'refused the connection' };

/** A failed run that could not reach its first host for a lasting reason: not retried, refunded, said plainly. */
function unreachableFailure(hosts: UnreachableHost[]): ApplicationFailure | null {
  const first = hosts.find((h) => PERMANENT[h.code]);
  if (!first) return null;
  return JobFailure.user('unavailable', `The source is not available: ${first.host} ${PERMANENT[first.code]}`);
}

/** Node-side fetches throw EgressRefusedError themselves: the same failure. */
export function asRefusal(err: unknown): unknown {
  return err instanceof EgressRefusedError ? refusalFailure(err) : err;
}
