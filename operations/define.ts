import type { z } from 'zod';
import type { FieldError } from '../lib/errors';
import type { JobOutputView, OutputContext } from './output-view';
import type { JobOutput } from '../lib/job-reports';
import type { PlanName } from '../lib/plans';
import type { TaskQueue } from '../lib/queues';
import type { StepDeps } from './step-deps';
import type { ServerCapabilities } from '../lib/server-capabilities';

export type { ServerCapabilities };

/** How a job's output file is best shown: inline text, an image, media to play, or JSON. */
export type OutputKind = 'media' | 'text' | 'json';

/**
 * What an operation says about itself to clients: REST routes, OpenAPI, MCP tools and dashboard
 * forms are generated from it (the operation's spec.ts).
 */
export interface OperationSpec<T extends string, S extends z.ZodType> {
  jobType: T;
  /** The create call, `POST {path}`. */
  path: `/v1/${string}`;
  /** Short human name ("Download"). */
  title: string;
  /** One sentence: OpenAPI summary, MCP description, dashboard form intro. */
  summary: string;
  /** Strict request schema; its output is the job's normalised `parameters`. */
  request: S;
  /** Shape of `result_data` of a completed job. */
  result: z.ZodType;
  cost(params: z.output<S>): number;
  /** The cost as a phrase, for documentation ("1 credit, 2 with processing"). */
  costText: string;
  mcp: { tool: string; title: string };
  output: OutputKind;
  /** Content types of output file extensions the service does not already know (jobs/outputs.ts), e.g. `{ png: 'image/png' }`. */
  outputTypes?: Record<string, string>;
  /** The request completed with what is known of its source at creation (its name and type), before it is checked and priced. */
  withSource?(params: z.output<S>, source: { name: string; contentType: string | null }): z.output<S>;
  /** Checks against what this server has installed; each problem (a whole sentence) becomes a 422 field error. */
  check?(params: z.output<S>, caps: ServerCapabilities): FieldError[];
  /** Media the job fetches besides its source (reference clips): checked at creation as the source is, each under its own field. */
  extraSources?(params: z.output<S>): ExtraSource[];
}

/** A further source of a job: a URL or an upload, named by the request field that holds it. */
export interface ExtraSource {
  field: string;
  url?: string;
  upload_id?: string;
  /** How long it must be (seconds, inclusive): an upload, measured when it was received, is held to it at creation. */
  seconds?: readonly [number, number];
}

/** The workflow steps of one operation (its runner.ts): from the job's parameters to its output file and result_data. */
export type OperationRunner<P> = (job: { jobId: string; params: P; plan?: PlanName }) => Promise<JobOutput>;

type ActivityFunctions = Record<string, (...args: never[]) => Promise<unknown>>;

/** An operation's own activities (its activities.ts) and the queue whose workers run them. */
export interface OperationSteps<Q extends TaskQueue = TaskQueue, A extends ActivityFunctions = ActivityFunctions> {
  queue: Q;
  create(deps: StepDeps): A;
}

/**
 * One asynchronous operation, whole: its spec, its runner, its own activities and how the dashboard
 * shows its output. The registry (registry.ts) lists each once.
 *
 * In the workflow sandbox an operation folder's spec.ts, activities.ts and view.ts are empty modules
 * (workers/workflow-bundle.ts): there only `runner` is read.
 */
export interface Operation<T extends string, S extends z.ZodType, St extends OperationSteps | null> extends OperationSpec<T, S> {
  runner: OperationRunner<z.output<S>>;
  /** Activities of this operation alone; steps several operations share are in activities/. */
  steps: St;
  /** How the dashboard shows a completed job's output. */
  show(job: OutputContext): JobOutputView | Promise<JobOutputView>;
}

/** Declares an operation (its folder's index.ts), keeping its literal types for the registry. */
export function defineOperation<const T extends string, S extends z.ZodType, St extends OperationSteps | null>(operation: Operation<T, S, St>): Operation<T, S, St> {
  return operation;
}
