import { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { currentToolNiceness, withToolNiceness } from '../engines/child-process';

/**
 * A worker's run permits for one queue, shared by account (the fairness key its steps inherit from
 * their job): `capacity` steps run at once, and `reserve` of them are always another account's, so
 * that many steps of another account start at once however many of one account's steps are running.
 * Steps beyond that wait here (the worker's interceptor heartbeats for them; cancellable) and are let
 * in fewest-running-account first; the worker takes more tasks than it runs (slotsFor) so that one
 * account's waiting steps never hold every slot.
 */
export class AccountPermits {
  private running = 0;
  private readonly byAccount = new Map<string, number>();
  private readonly waiting: { account: string; admit: () => void }[] = [];

  constructor(readonly capacity: number, readonly reserve = reservedPermits(capacity)) {}

  /** Permits the account holds now. */
  runningOf(account: string): number {
    return this.byAccount.get(account) ?? 0;
  }

  /** The account holds more than one permit and more than any other account: its extra steps yield the CPU. */
  holdsMost(account: string): boolean {
    const mine = this.runningOf(account);
    if (mine <= 1) return false;
    for (const [other, n] of this.byAccount) if (other !== account && n >= mine) return false;
    return true;
  }

  /** The most permits one account may hold: all but the reserve, so another account always finds one. */
  get accountCap(): number {
    return Math.max(1, this.capacity - this.reserve);
  }

  private canRun(account: string): boolean {
    return this.running < this.capacity && this.runningOf(account) < this.accountCap;
  }

  private take(account: string): void {
    this.running++;
    this.byAccount.set(account, this.runningOf(account) + 1);
  }

  /** Waits for a permit; resolves a release function. Rejects (leaving no permit held) when `signal` aborts. */
  async acquire(account: string, signal: AbortSignal): Promise<() => void> {
    if (!this.canRun(account) || this.waiting.length > 0) {
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const entry = { account, admit: resolve };
        this.waiting.push(entry);
        signal.addEventListener('abort', () => {
          const i = this.waiting.indexOf(entry);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled while waiting for a run permit'));
        }, { once: true });
        this.admit();
      });
    } else {
      this.take(account);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const n = this.runningOf(account) - 1;
      if (n > 0) this.byAccount.set(account, n);
      else this.byAccount.delete(account);
      this.admit();
    };
  }

  /** Lets in waiting steps while permits allow: the account running the fewest first, then first come. */
  private admit(): void {
    for (;;) {
      let best = -1;
      for (let i = 0; i < this.waiting.length; i++) {
        const w = this.waiting[i]!;
        if (!this.canRun(w.account)) continue;
        if (best < 0 || this.runningOf(w.account) < this.runningOf(this.waiting[best]!.account)) best = i;
      }
      if (best < 0) return;
      const [w] = this.waiting.splice(best, 1);
      this.take(w!.account);
      w!.admit();
    }
  }
}

/**
 * Permits always left for other accounts: a quarter of the queue's, at least one. A neighbour's few
 * jobs (5 previews at once, say) then start together on a network-bound queue, where one account's
 * steps may each wait seconds on a silent origin; one account still runs three quarters.
 */
export function reservedPermits(capacity: number): number {
  return Math.max(1, Math.ceil(capacity / 4));
}

/** Slots for a worker whose permits are shared by account: more than any account can have steps in flight, plus the permits. */
export function slotsFor(capacity: number, largestRunningJobs: number): number {
  return capacity + largestRunningJobs;
}

/**
 * Runs each step of the queue under an account's permit. A step of the account holding the most
 * permits here (more than one) starts its tools at `crowdedNiceness` (the batch niceness): the kernel
 * then gives the other accounts' steps the cores first, as the permits give them a slot first.
 */
export class AccountShareInterceptor implements ActivityInboundCallsInterceptor {
  constructor(private readonly permits: AccountPermits, private readonly crowdedNiceness: number) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const ctx = Context.current();
    const account = ctx.info.priority?.fairnessKey ?? '';
    const release = await this.permits.acquire(account, ctx.cancellationSignal);
    try {
      const crowded = this.permits.holdsMost(account) && this.crowdedNiceness > currentToolNiceness();
      return await (crowded ? withToolNiceness(this.crowdedNiceness, () => next(input)) : next(input));
    } finally {
      release();
    }
  }
}
