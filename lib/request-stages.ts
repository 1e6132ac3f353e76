// Where a request's time goes, stage by stage (key check, rate window, job read, live progress,
// serialisation, log): each mark closes the stage since the one before. With SERVER_TIMING on, the
// API sends them as a Server-Timing header (durations in ms), which `make bench` reads.

export class RequestStages {
  private last = performance.now();
  private readonly spent: [string, number][] = [];

  /** Closes the stage running since the last mark (or the request's start) under `stage`. */
  mark(stage: string): void {
    const now = performance.now();
    this.spent.push([stage, now - this.last]);
    this.last = now;
  }

  /** The Server-Timing header's value: `key;dur=0.123, rate;dur=0.456, …`. */
  header(): string {
    return this.spent.map(([stage, ms]) => `${stage};dur=${ms.toFixed(3)}`).join(', ');
  }
}

/** The stages of a Server-Timing header, ms by name (a stage named twice is summed). */
export function parseServerTiming(value: string | null | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (value ?? '').split(',')) {
    const m = /^\s*([\w-]+)\s*;\s*dur=([\d.]+)/.exec(part);
    if (m) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}
