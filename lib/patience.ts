/** How `retryPatiently` waits: the first wait, doubled each time up to `maxMs`, while the next one ends within `withinMs` of the first try. */
export interface Patience {
  firstMs: number;
  maxMs: number;
  withinMs: number;
  /** Whether an error is worth another try (all are, when not given). */
  retryable?: (err: unknown) => boolean;
  /** Told of each error that is tried again, and of the wait before the next try. */
  onRetry?: (err: unknown, waitMs: number) => void;
}

/** Runs `attempt` again, with a doubling wait, while its error is retryable and the patience lasts; then throws the last error. */
export async function retryPatiently<T>(attempt: () => Promise<T>, p: Patience): Promise<T> {
  const deadline = Date.now() + p.withinMs;
  for (let wait = p.firstMs; ; wait = Math.min(2 * wait, p.maxMs)) {
    try {
      return await attempt();
    } catch (err) {
      if ((p.retryable && !p.retryable(err)) || Date.now() + wait > deadline) throw err;
      p.onRetry?.(err, wait);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
