// The operation registry: every asynchronous operation, listed once. Job types, the workflow's
// runners, the workers' activities, REST routes, OpenAPI, MCP tools and dashboard forms and views
// all come from this list. An operation is a folder beside this file (see docs/architecture.md).
// Imports run one way through here, types included: what this file derives for the layers above
// (JobParams, JobType, through jobs/types.ts) no step or runner below it reads, and the operations'
// own activities reach the runners' proxies by declaration merging (workflows/activity-plan.ts).
import type { z } from 'zod';
import type { TaskQueue } from '../lib/queues';
import { comments } from './comments';
import type { Operation, OperationSteps } from './define';
import type { StepDeps } from './step-deps';
import { download } from './download';
import { fingerprint } from './fingerprint';
import { preview } from './preview';
import { transcribe } from './transcribe';
import { translate } from './translate';
import { waveform } from './waveform';

export const OPERATIONS = { download, preview, transcribe, translate, fingerprint, comments, waveform } as const;

type Operations = typeof OPERATIONS;
export type JobType = keyof Operations;
/** Every job type, in the registry's order. */
export const JOB_TYPES = Object.keys(OPERATIONS) as [JobType, ...JobType[]];
/** Normalised parameters of a job type (what `parameters` echoes and the workflow receives). */
export type JobParams<T extends JobType> = z.output<Operations[T]['request']>;
export type AnyOperation = Operations[JobType];

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type StepsOn<Q extends TaskQueue> = { [T in JobType]: Operations[T]['steps'] extends OperationSteps<Q, infer A> ? A : never }[JobType];
/** The activities the operations register on a queue (each operation's activities.ts). */
export type OperationActivities<Q extends TaskQueue> = [StepsOn<Q>] extends [never] ? Record<never, never> : UnionToIntersection<StepsOn<Q>>;
type OperationActivitiesByQueue = { [Q in TaskQueue]: OperationActivities<Q> };

// The runners call these through the workflows' activity proxies, which cannot import this file (it
// imports the runners): it declares them in the plan the proxies read (declaration merging).
declare module '../workflows/activity-plan' {
  interface OperationActivityTypes extends OperationActivitiesByQueue {}
}

/** Why the registry cannot serve, one line each (a key that is not its job type, a path or tool used twice); empty when sound. */
export function registryProblems(): string[] {
  const problems: string[] = [];
  const owner = new Map<string, string>();
  const once = (what: string, name: string, key: string): void => {
    const earlier = owner.get(`${what} ${name}`);
    if (earlier) problems.push(`${what} ${name} is declared by both ${earlier} and ${key}`);
    owner.set(`${what} ${name}`, key);
  };
  for (const [key, op] of Object.entries(OPERATIONS) as [string, Operation<string, z.ZodType, OperationSteps | null>][]) {
    if (op.jobType !== key) problems.push(`the registry lists ${op.jobType} under the name ${key}`);
    if (typeof op.runner !== 'function') problems.push(`${key} has no runner`);
    once('path', op.path, key);
    once('MCP tool', op.mcp.tool, key);
  }
  return problems;
}

/** Throws when the registry is not sound: an API or worker process does not start on it. */
export function assertRegistrySound(): void {
  const problems = registryProblems();
  if (problems.length) throw new Error(`the operation registry is not sound (${problems.join('; ')}); refusing to start`);
}

/**
 * The operations' own activities on one queue, for its worker. A name two operations (or an operation
 * and the queue's shared steps, `taken`) both register is refused: the worker would not start.
 */
export function operationActivities<Q extends TaskQueue>(queue: Q, deps: StepDeps, taken: readonly string[] = []): OperationActivities<Q> {
  const owner = new Map<string, string>(taken.map((name) => [name, 'the queue\'s shared steps']));
  const all: Record<string, unknown> = {};
  for (const op of Object.values(OPERATIONS) as Operation<string, z.ZodType, OperationSteps | null>[]) {
    if (op.steps?.queue !== queue) continue;
    for (const [name, fn] of Object.entries(op.steps.create(deps))) {
      const earlier = owner.get(name);
      if (earlier) throw new Error(`the activity ${name} is registered by both ${earlier} and ${op.jobType} on the ${queue} queue; refusing to start`);
      owner.set(name, op.jobType);
      all[name] = fn;
    }
  }
  return all as OperationActivities<Q>;
}
