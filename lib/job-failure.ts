// One failure model from engine to HTTP. Engines and activities throw a JobFailure; it is Temporal's
// ApplicationFailure already (no conversion can lose it), and its type is the wire name that recorded
// histories carry, so every reader (workflow, REST, MCP, dashboard, logs) learns its kind from the type.
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';

/** The user's errors: not retried, refunded, their message shown as it is. */
export const USER_FAILURE_TYPES = {
  unsupported: 'UnsupportedUrl',
  unavailable: 'SourceUnavailable',
  rejected: 'SourceRejected',
} as const;

/** A tool that failed in a way that may pass: retried; the message is phrased for people, the tool's own output rides in details for the logs. */
export const TOOL_FAILURE_TYPES = {
  ytdlp: 'YtDlpFailed',
  download: 'DirectDownloadFailed',
  comments: 'CommentsFailed',
  ffmpeg: 'FfmpegFailed',
} as const;

/**
 * A dependency of the service itself (its disk, its file store) failed in a way that may pass: retried,
 * and the message, phrased for people, names the dependency and never a path.
 */
export const DEPENDENCY_FAILURE_TYPE = 'DependencyUnavailable';

/**
 * The platform refused the service itself (a 429, a sign-in or bot check): not this video's fault.
 * Never retried by the step; the job workflow counts it against the platform's circuit breaker and,
 * once the breaker is open, waits for the platform instead of failing. Stored as `unavailable`.
 */
export const PLATFORM_REFUSED_TYPE = 'PlatformRefused';

/** How a job workflow ends when its job failed (after the refund): the failure of the job, not of the service. */
export const JOB_FAILED = 'JobFailed';

export type UserFailureKind = keyof typeof USER_FAILURE_TYPES;
export type ToolName = keyof typeof TOOL_FAILURE_TYPES;
/** user kinds; `tool`: a retryable tool failure; `internal`: the service's own fault, never shown in its own words. */
export type JobFailureKind = UserFailureKind | 'tool' | 'dependency' | 'internal';

/**
 * What a failed job's row records as its failure_kind, and every reader (REST, MCP, the OpenAI routes,
 * the dashboard, metrics) goes by: a failure's kind, or how the workflow saw it end.
 */
export const STORED_FAILURE_KINDS = ['unsupported', 'unavailable', 'rejected', 'tool', 'dependency', 'internal', 'timeout', 'cancelled'] as const;
export type StoredFailureKind = (typeof STORED_FAILURE_KINDS)[number];

/** The error_message of a job that failed on the service's own fault: never the fault's own words. */
export const INTERNAL_FAILURE_MESSAGE = 'Processing failed because of an internal error (the details are in the service logs); the credits were refunded. Try again, and contact support if it persists';

const USER_BY_TYPE = new Map<string, UserFailureKind>(Object.entries(USER_FAILURE_TYPES).map(([kind, type]) => [type, kind as UserFailureKind]));
const TOOL_TYPES = new Set<string>(Object.values(TOOL_FAILURE_TYPES));

export class JobFailure extends ApplicationFailure {
  private constructor(
    readonly kind: JobFailureKind,
    message: string,
    type: string,
    nonRetryable: boolean,
    details: unknown[] | undefined,
    category: ApplicationFailureCategory | undefined,
  ) {
    super(message, type, nonRetryable, details, undefined, undefined, category);
  }

  /** The user's error: benign (no stack in the logs, not a fault in the Temporal UI), never retried. */
  static user(kind: UserFailureKind, message: string, toolOutput?: string): JobFailure {
    return new JobFailure(kind, message, USER_FAILURE_TYPES[kind], true, toolOutput === undefined ? undefined : [toolOutput], ApplicationFailureCategory.BENIGN);
  }

  /** A tool's failure that may pass on a retry; `message` is what a person reads if every attempt fails. */
  static tool(tool: ToolName, message: string, toolOutput?: string): JobFailure {
    return new JobFailure('tool', message, TOOL_FAILURE_TYPES[tool], false, toolOutput === undefined ? undefined : [toolOutput], undefined);
  }

  /** A dependency of the service that failed (a full disk, an unreachable bucket): retried; `message` is what a person reads if every attempt fails. */
  static dependency(message: string): JobFailure {
    return new JobFailure('dependency', message, DEPENDENCY_FAILURE_TYPE, false, undefined, undefined);
  }

  /** The platform refused the service (rate limit, bot check): not retried; the job's workflow decides whether to wait for the platform. */
  static refused(message: string, toolOutput?: string): JobFailure {
    return new JobFailure('unavailable', message, PLATFORM_REFUSED_TYPE, true, toolOutput === undefined ? undefined : [toolOutput], ApplicationFailureCategory.BENIGN);
  }

  /** The service's own fault (a worker without what a step needs, a job row gone): not retried. */
  static internal(message: string, type = 'InternalError'): JobFailure {
    return new JobFailure('internal', message, type, true, undefined, undefined);
  }
}

/** The kind a failure type stands for, wherever it was thrown (a recorded history's included). */
export function failureKindOf(type: string | null | undefined): JobFailureKind {
  if (!type) return 'internal';
  if (type === DEPENDENCY_FAILURE_TYPE) return 'dependency';
  if (type === PLATFORM_REFUSED_TYPE) return 'unavailable';
  return USER_BY_TYPE.get(type) ?? (TOOL_TYPES.has(type) ? 'tool' : 'internal');
}

/** The user kind of a failure type, or null when it is not the user's error. */
export function userFailureKind(type: string | null | undefined): UserFailureKind | null {
  return (type && USER_BY_TYPE.get(type)) || null;
}

/** Failure types that are never retried: the user's errors. */
export const NON_RETRYABLE_FAILURE_TYPES: string[] = [...Object.values(USER_FAILURE_TYPES), PLATFORM_REFUSED_TYPE];
