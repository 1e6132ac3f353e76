import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory, CancelledFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { keepAlive } from '../activities/step/heartbeat';
import { withToolNiceness } from '../engines/child-process';
import { userFailureKind } from '../lib/job-failure';
import { PRIORITY } from '../lib/plans';


/**
 * How every activity's outcome is reported to Temporal:
 * - a step whose tool was killed because the activity was cancelled reports a cancellation (tools
 *   reject with their own errors when their process is killed), so the workflow can end the job as
 *   cancelled once the step has really stopped;
 * - a user's error (an unsupported URL, a refused address, a source past the limits) is BENIGN: the
 *   job fails with its message, and the worker does not log it as a fault with a stack trace.
 * - a step with a heartbeat timeout heartbeats every second while it runs (with its last progress).
 * The tools an activity starts run at its queue's CPU niceness, and a batch job's (its priority,
 * inherited from its workflow) at the batch niceness: on a shared machine another account's ordinary
 * job gets the CPU first, as it gets the queue first.
 */
export class ActivityOutcomeInterceptor implements ActivityInboundCallsInterceptor {
  constructor(private readonly toolNiceness: { ordinary: number; batch: number } = { ordinary: 0, batch: 0 }) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const { info } = Context.current();
    const batch = (info.priority?.priorityKey ?? 0) >= PRIORITY.batch;
    // a step with a heartbeat timeout beats every second for as long as it runs in this process, so
    // the timeout can be short and a dead worker's step moves to another one within it
    const stopBeating = (info.heartbeatTimeoutMs ?? 0) > 0 ? keepAlive() : undefined;
    try {
      return await withToolNiceness(batch ? this.toolNiceness.batch : this.toolNiceness.ordinary, () => next(input));
    } catch (err) {
      if (Context.current().cancellationSignal.aborted && !(err instanceof CancelledFailure)) {
        throw new CancelledFailure('the step was cancelled and its tools stopped', [], err instanceof Error ? err : undefined);
      }
      if (err instanceof ApplicationFailure && userFailureKind(err.type) && err.category !== ApplicationFailureCategory.BENIGN) {
        throw ApplicationFailure.create({ message: err.message, type: err.type ?? undefined, nonRetryable: err.nonRetryable ?? undefined, details: err.details as unknown[], category: ApplicationFailureCategory.BENIGN });
      }
      throw err;
    } finally {
      stopBeating?.();
    }
  }
}
