import type { AsyncCompletionClient } from '@temporalio/client';
import type { AttemptResult, SlowAnswers } from '../webhooks/activities';
import { log } from '../lib/logger';

/**
 * How long a webhook attempt holds its worker slot before its answer is awaited off it. Endpoints that
 * answer within it never leave the slot; a slower one frees its slot after this, so each of a worker's
 * slots takes a new attempt at least this often, however slow the endpoints behind the queue are.
 */
export const WEBHOOK_SLOT_HOLD_MS = 1000;

/**
 * The webhooks worker's slow answers: each is awaited here (at most the webhook window) and reported
 * through the client, as the activity's async completion. A worker that stops waits for them first.
 */
export class SlowAnswerCompletions implements SlowAnswers {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly activities: AsyncCompletionClient, readonly holdMs = WEBHOOK_SLOT_HOLD_MS) {}

  complete(taskToken: Uint8Array, result: Promise<AttemptResult>): void {
    const reported: Promise<void> = result
      .then(
        (value) => this.activities.complete(taskToken, value),
        (err: unknown) => this.activities.fail(taskToken, err),
      )
      .catch((err: unknown) => {
        // the attempt outlived its timeout (the workflow has counted it as lost) or Temporal is away
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'a webhook attempt finished off its worker slot, but its outcome could not be reported');
      })
      .finally(() => this.pending.delete(reported));
    this.pending.add(reported);
  }

  /** Waits until every awaited answer has been reported. */
  async drain(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }
}
