import type { z } from 'zod';
import type { FieldError } from '../errors';
import type { JobType } from '../jobs';
import type { TaskQueue } from '../queues';

/** What the server has installed, for checks a static schema cannot make (models, translation pairs). */
export interface ServerCapabilities {
  speech: {
    /** Why `code` is not a language speech recognition knows (a phrase after the field name), or null. */
    spokenLanguageProblem(code: string): string | null;
    /** Why no installed model serves this size (and spoken language, when known), as a sentence, or null. */
    modelProblem(size: 'tiny' | 'base' | 'small' | 'medium', language: string | null): string | null;
    /** Why speech cannot be translated from `source` (null: detected) into `target`, as a sentence, or null. */
    translationProblem(source: string | null, target: string): string | null;
  };
}

/** How a job's output file is best shown: inline text, an image, media to play, or JSON. */
export type OutputKind = 'media' | 'text' | 'json';

/**
 * One asynchronous operation, declared once. REST routes, OpenAPI, MCP tools and dashboard forms are
 * generated from these; the workflow side (workflows/runners) is keyed by the same job types.
 */
export interface OperationSpec<T extends JobType, S extends z.ZodType> {
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
  /** Task queues the operation's workflow steps use (workflows/runners). */
  queues: readonly TaskQueue[];
  mcp: { tool: string; title: string };
  output: OutputKind;
  /** Checks against what this server has installed; each problem (a whole sentence) becomes a 422 field error. */
  check?(params: z.output<S>, caps: ServerCapabilities): FieldError[];
}
