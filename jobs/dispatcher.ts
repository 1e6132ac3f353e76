import type { MediaJobInput } from './types';
import type { Orchestrator } from './orchestrator';

/**
 * Starts job workflows after their rows are committed: the sending half of a transactional outbox
 * (the pending row is the outbox entry). A few starts run at once; the rest wait in memory. A start
 * that fails, or one lost with the process, is left to the reconciler (a Temporal Schedule that
 * starts every job still pending after a few seconds; starts are idempotent by workflow id).
 */
export class JobDispatcher {
  private queue: MediaJobInput[] = [];
  private running = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly orchestrator: Pick<Orchestrator, 'startJob'>,
    private readonly opts: { concurrency?: number; log?: (msg: string, err: unknown) => void } = {},
  ) {}

  dispatch(input: MediaJobInput): void {
    this.queue.push(input);
    this.pump();
  }

  /** Resolves once every dispatched start has been tried (for shutdown and tests). */
  drained(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.running < (this.opts.concurrency ?? 16) && this.queue.length > 0) {
      const input = this.queue.shift()!;
      this.running++;
      this.orchestrator
        .startJob(input)
        .catch((err: unknown) => this.opts.log?.(`job ${input.jobId}: workflow not started now (the reconciler will start it)`, err))
        .finally(() => {
          this.running--;
          this.pump();
          if (this.running === 0 && this.queue.length === 0) for (const resolve of this.idle.splice(0)) resolve();
        });
    }
  }
}
