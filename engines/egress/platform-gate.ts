// PLATFORM_CONCURRENCY: how many steps of this process talk to one platform at once, across all
// accounts. A step beyond the cap waits here for a turn (it does not fail); a step already holding
// its platform's turn (a probe inside a download, say) goes on without taking a second one.
import { AsyncLocalStorage } from 'node:async_hooks';
import { urlHost } from '../../lib/address-policy';
import { siteOf, type PlatformConcurrency } from '../../lib/source-sites';

const DEFAULT_SITE = '';

export class PlatformGate {
  private readonly caps: Map<string, number>;
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly held = new AsyncLocalStorage<ReadonlySet<string>>();
  private peak = new Map<string, number>();

  constructor(private readonly settings: PlatformConcurrency) {
    this.caps = new Map(Object.entries(settings.bySite));
  }

  /** The platform a URL's host counts against, and its cap (null: none). */
  platformOf(url: string): { site: string; cap: number | null } {
    let host: string;
    try {
      host = urlHost(url).host;
    } catch {
      return { site: DEFAULT_SITE, cap: null };
    }
    const site = siteOf(host, this.caps);
    if (site) return { site, cap: this.caps.get(site)! };
    // sites without a cap of their own share none: the default caps each host on its own
    return { site: `host:${host.toLowerCase()}`, cap: this.settings.default };
  }

  /** Runs `fn` holding a turn of the URL's platform; waits (abortable) while the platform is at its cap. */
  async hold<T>(url: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const { site, cap } = this.platformOf(url);
    const mine = this.held.getStore();
    if (cap === null || mine?.has(site)) return fn();
    await this.acquire(site, cap, signal);
    try {
      return await this.held.run(new Set([...(mine ?? []), site]), fn);
    } finally {
      this.release(site);
    }
  }

  /** Steps talking to each platform now, for /metrics and tests. */
  snapshot(): Record<string, { running: number; waiting: number; peak: number }> {
    const out: Record<string, { running: number; waiting: number; peak: number }> = {};
    for (const site of new Set([...this.running.keys(), ...this.waiting.keys(), ...this.peak.keys()])) {
      out[site] = { running: this.running.get(site) ?? 0, waiting: this.waiting.get(site)?.length ?? 0, peak: this.peak.get(site) ?? 0 };
    }
    return out;
  }

  private async acquire(site: string, cap: number, signal?: AbortSignal): Promise<void> {
    if ((this.running.get(site) ?? 0) >= cap) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const queue = this.waiting.get(site) ?? [];
        this.waiting.set(site, queue);
        const turn = () => resolve();
        queue.push(turn);
        signal?.addEventListener('abort', () => {
          const i = queue.indexOf(turn);
          if (i >= 0) queue.splice(i, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled while waiting for a turn of the platform'));
        }, { once: true });
      });
      // the releasing step handed its turn over: the count already includes this one
      return;
    }
    this.take(site);
  }

  private take(site: string): void {
    const n = (this.running.get(site) ?? 0) + 1;
    this.running.set(site, n);
    this.peak.set(site, Math.max(this.peak.get(site) ?? 0, n));
  }

  private release(site: string): void {
    const next = this.waiting.get(site)?.shift();
    if (next) return next(); // the turn passes on: the count stays
    const n = (this.running.get(site) ?? 1) - 1;
    if (n > 0) this.running.set(site, n);
    else this.running.delete(site);
    if (this.waiting.get(site)?.length === 0) this.waiting.delete(site);
  }
}

let processGate = new PlatformGate({ default: null, bySite: {} });

/** This process's gate (the worker sets it from PLATFORM_CONCURRENCY at start). */
export function usePlatformGate(gate: PlatformGate): void {
  processGate = gate;
}

export function platformGate(): PlatformGate {
  return processGate;
}
