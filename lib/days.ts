// UTC calendar days, the unit of every per-day chart.

/** The last `n` UTC days up to today, oldest first, as `YYYY-MM-DD`. */
export function lastDays(n: number, now = new Date()): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: n }, (_, i) => new Date(today - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/** The UTC day of an instant, `YYYY-MM-DD`. */
export function dayOf(d: Date): string {
  return d.toISOString().slice(0, 10);
}
