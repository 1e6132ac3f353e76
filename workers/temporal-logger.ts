// Temporal's Runtime, worker and workflow logs, forwarded into the service's JSON log at LOG_LEVEL.
import { ApplicationFailureCategory, type LogLevel as TemporalLevel, type LogMetadata, type Logger as TemporalLoggerApi } from '@temporalio/common';
import { JOB_FAILED, userFailureKind } from '../lib/job-failure';
import { log, userError } from '../lib/logger';

const LEVELS = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;
/** Start-up notes of workers that poll only activities: expected, not warnings. */
const ROUTINE = /^No (workflows|Nexus services) registered/;

/** The user's failure in an error's cause chain, if that is what it is; duck-typed, since workflow errors come from the sandbox's realm. */
function userFailure(err: unknown): { type?: string; message?: string } | null {
  for (let cur = err as { type?: unknown; category?: unknown; cause?: unknown } | undefined, depth = 0; cur && typeof cur === 'object' && depth < 8; cur = cur.cause as typeof cur, depth++) {
    // a job that failed for its user's reason ends its workflow with JobFailed
    if ((typeof cur.type === 'string' && (userFailureKind(cur.type) || cur.type === JOB_FAILED)) || cur.category === ApplicationFailureCategory.BENIGN) return cur as { type?: string; message?: string };
  }
  return null;
}

/**
 * A job workflow ends Failed only with its job's own failure (JobFailed, thrown as an ApplicationFailure
 * after the refund). Workflow logs are structured-cloned out of the workflow thread, which drops the
 * failure's type, so that ending is recognised by the error's class name on its stack's first line.
 */
function jobEndedFailed(message: string, meta: LogMetadata, err: unknown): boolean {
  const stack = (err as { stack?: unknown } | undefined)?.stack;
  return message === 'Workflow failed' && meta.workflowType === 'mediaJobWorkflow' && typeof stack === 'string' && stack.startsWith('ApplicationFailure:');
}

export class TemporalLogForwarder implements TemporalLoggerApi {
  private readonly out = log.child({ component: 'temporal' });

  log(level: TemporalLevel, message: string, meta: LogMetadata = {}): void {
    const { error, failure, workflowId, ...rest } = meta as LogMetadata & { error?: unknown; failure?: unknown; workflowId?: unknown };
    const fields: Record<string, unknown> = { ...rest };
    if (typeof workflowId === 'string') {
      fields.workflowId = workflowId;
      // job workflows are job-{id}: the job's lines carry its job_id like the service's own
      if (workflowId.startsWith('job-')) fields.job_id = workflowId.slice(4);
    }
    const err = error ?? failure;
    const user = err === undefined ? null : jobEndedFailed(message, meta, err) ? { type: 'JobFailed', message: (err as Error).message } : userFailure(err);
    // a user's error is one line without a stack, and no warning: the job's own "job failed" line says it
    // `error` is a plain field (type, message); `err` goes through pino's serializer, stack included
    if (user) fields.error = userError(user);
    else if (err !== undefined) fields.err = err;
    const to = user && (level === 'WARN' || level === 'ERROR') ? 'INFO' : ROUTINE.test(message) ? 'DEBUG' : level;
    this.out[LEVELS[to]](fields, message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}
