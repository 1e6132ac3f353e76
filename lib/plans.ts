// The plans, in one table: what each allows per minute and per month, the largest source it takes,
// and its share of the workers when accounts compete (fairnessWeight: Temporal dispatches each queue's
// tasks round-robin across accounts, weighted by this; maxRunningJobs: jobs processing at once, the
// rest wait pending in order; maxInfoReads: GET /v1/info reads in flight at once; maxBatchItems: the
// items one batch, or one subscription's check, takes from its source; maxSubscriptions: subscriptions
// at once). A source limit
// above the service's own (MAX_SOURCE_BYTES, MAX_SOURCE_DURATION_SECONDS) is capped by it.

const GiB = 1024 ** 3;
const HOUR = 3600;

export const PLANS = {
  free: { requestsPerMinute: 10, monthlyCredits: 25, maxSourceBytes: 0.5 * GiB, maxSourceSeconds: 1 * HOUR, fairnessWeight: 1, maxRunningJobs: 2, maxInfoReads: 2, maxBatchItems: 100, maxSubscriptions: 2 },
  starter: { requestsPerMinute: 60, monthlyCredits: 1_000, maxSourceBytes: 2 * GiB, maxSourceSeconds: 2 * HOUR, fairnessWeight: 2, maxRunningJobs: 4, maxInfoReads: 4, maxBatchItems: 1_000, maxSubscriptions: 10 },
  pro: { requestsPerMinute: 200, monthlyCredits: 2_000, maxSourceBytes: 4 * GiB, maxSourceSeconds: 4 * HOUR, fairnessWeight: 3, maxRunningJobs: 8, maxInfoReads: 8, maxBatchItems: 2_500, maxSubscriptions: 25 },
  growth: { requestsPerMinute: 500, monthlyCredits: 10_000, maxSourceBytes: 4 * GiB, maxSourceSeconds: 4 * HOUR, fairnessWeight: 4, maxRunningJobs: 12, maxInfoReads: 12, maxBatchItems: 5_000, maxSubscriptions: 50 },
  business: { requestsPerMinute: 1_000, monthlyCredits: 35_000, maxSourceBytes: 4 * GiB, maxSourceSeconds: 4 * HOUR, fairnessWeight: 5, maxRunningJobs: 16, maxInfoReads: 16, maxBatchItems: 10_000, maxSubscriptions: 100 },
  // the contract's custom plan "with higher limits"; its figures are set here until sales sets them per account
  enterprise: { requestsPerMinute: 10_000, monthlyCredits: 100_000, maxSourceBytes: 4 * GiB, maxSourceSeconds: 4 * HOUR, fairnessWeight: 6, maxRunningJobs: 32, maxInfoReads: 32, maxBatchItems: 10_000, maxSubscriptions: 500 },
} as const;
export type PlanName = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

/** The source limits a job runs under, and who sets each (a plan, or the service's own ceiling). */
export interface SourceLimits {
  maxBytes: number;
  maxSeconds: number;
  bytesSetBy: string;
  secondsSetBy: string;
}

/** A plan's source limits under the service's ceiling; the ceiling alone for a job with no plan (started by an older release). */
export function sourceLimits(plan: PlanName | undefined, ceiling: { maxSourceBytes: number; maxSourceDurationSeconds: number }): SourceLimits {
  const p = plan ? PLANS[plan] : undefined;
  const byPlan = (planValue: number | undefined, serviceValue: number) => planValue !== undefined && planValue <= serviceValue;
  const bytesByPlan = byPlan(p?.maxSourceBytes, ceiling.maxSourceBytes);
  const secondsByPlan = byPlan(p?.maxSourceSeconds, ceiling.maxSourceDurationSeconds);
  return {
    maxBytes: bytesByPlan ? p!.maxSourceBytes : ceiling.maxSourceBytes,
    maxSeconds: secondsByPlan ? p!.maxSourceSeconds : ceiling.maxSourceDurationSeconds,
    bytesSetBy: bytesByPlan ? `the ${plan} plan` : 'this service',
    secondsSetBy: secondsByPlan ? `the ${plan} plan` : 'this service',
  };
}

/** "The source is larger than 2 GiB, the limit of the starter plan" (with its size when known). */
export function tooLargeMessage(limits: SourceLimits, size?: number | null): string {
  return `The source is larger than ${formatBytes(limits.maxBytes)}, the limit of ${limits.bytesSetBy}${size ? ` (it is ${formatBytes(size)})` : ''}`;
}

/** "The source is longer than 1 h, the limit of the free plan" (with its duration when known). */
export function tooLongMessage(limits: SourceLimits, seconds?: number | null): string {
  return `The source is longer than ${formatSeconds(limits.maxSeconds)}, the limit of ${limits.secondsSetBy}${seconds ? ` (it is ${formatSeconds(Math.round(seconds))} long)` : ''}`;
}

export function formatBytes(n: number): string {
  for (const [unit, size] of [['GiB', GiB], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (n >= size) return `${Math.round((n / size) * 10) / 10} ${unit}`;
  }
  return `${n} bytes`;
}

export function formatSeconds(s: number): string {
  if (s >= HOUR && s % 60 === 0) return s % HOUR === 0 ? `${s / HOUR} h` : `${Math.floor(s / HOUR)} h ${(s % HOUR) / 60} min`;
  if (s >= 60 && s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

/** Temporal priority keys (1 is served first; 3 is Temporal's default). */
export const PRIORITY = {
  /** Synchronous reads a person waits on (GET /v1/info). */
  interactive: 2,
  /** An account's jobs that start at once: created while the account had a running slot free. */
  normal: 3,
  /** An account's jobs created while its running slots were all taken: a batch, served after everyone's ordinary work. */
  batch: 4,
} as const;

/**
 * The Temporal priority of an account's work: its fairness key is the account, so one account's burst
 * queues behind its own tasks only, and a job created behind its plan's running slots' worth of the
 * account's own jobs (processing or pending) has batch priority, so another account's ordinary job goes
 * ahead of it on every queue, and its tools yield the CPU. Batch work is never starved by ordinary work
 * for long: each account has at most its slots' worth of ordinary jobs at once. Workflows pass it on
 * to their activities and child workflows.
 */
export function accountPriority(
  accountId: string | undefined,
  plan: PlanName | undefined,
  opts: { jobsAhead?: number; interactive?: boolean } = {},
): { priorityKey: number; fairnessKey: string; fairnessWeight: number } | undefined {
  if (!accountId) return undefined;
  const p = PLANS[plan ?? 'free'];
  const priorityKey = opts.interactive ? PRIORITY.interactive : (opts.jobsAhead ?? 0) >= p.maxRunningJobs ? PRIORITY.batch : PRIORITY.normal;
  return { priorityKey, fairnessKey: accountId, fairnessWeight: p.fairnessWeight };
}
