// Circuit breakers per platform, in the database so every worker and API process sees one state:
// refusals (a 429, a bot check) counted in a window open a platform's breaker; while it is open its
// jobs wait (pending) and one job at a time goes as a probe once the backoff has passed; a job that
// gets through closes it, a probe that is refused doubles the backoff.
import type { EntityManager } from '@mikro-orm/core';
import { log } from '../lib/logger';
import type { BreakerSettings } from '../lib/source-sites';
import { PlatformBreaker } from './entity';

/** A probe that has not reported within this long no longer holds the platform's one probe. */
const PROBE_HOLD_MS = 10 * 60_000;
/** A waiting job looks again at least this often (a closed breaker lets it go at once). */
const RECHECK_MS = 15_000;

/** `tracked`: the platform has refusals counted (or is open), so a job that gets through should say so. */
export type PlatformTurn = { go: true; probe: boolean; tracked: boolean } | { go: false; waitMs: number } | { go: false; expired: true; reason: string };

/** Counts a refusal; opens the breaker at the threshold, or (when open) backs off further. Returns whether it is open. */
export async function recordRefusal(em: EntityManager, platform: string, reason: string, s: BreakerSettings, now = new Date()): Promise<{ open: boolean; retryInMs: number }> {
  return em.transactional(async (tx) => {
    let b = await tx.findOne(PlatformBreaker, { platform });
    if (!b) {
      b = tx.create(PlatformBreaker, { platform, refusals: 0, windowStartedAt: now, backoffMs: 0, updatedAt: now });
    }
    if (!b.openedAt && now.getTime() - b.windowStartedAt.getTime() > s.windowMs) {
      b.refusals = 0;
      b.windowStartedAt = now;
    }
    b.refusals++;
    b.lastReason = reason;
    b.updatedAt = now;
    if (b.openedAt) {
      // a probe (or a job already under way) was refused again: wait longer
      b.backoffMs = Math.min(s.maxBackoffMs, Math.max(s.probeAfterMs, b.backoffMs * 2));
      b.nextProbeAt = new Date(now.getTime() + b.backoffMs);
      b.probeUntil = null;
    } else if (b.refusals >= s.threshold) {
      b.openedAt = now;
      b.backoffMs = s.probeAfterMs;
      b.nextProbeAt = new Date(now.getTime() + b.backoffMs);
      log.warn({ platform, refusals: b.refusals, window_seconds: s.windowMs / 1000, reason, next_probe_at: b.nextProbeAt.toISOString() }, `platform ${platform} is refusing requests: its jobs wait instead of failing, probing from ${b.nextProbeAt.toISOString()}`);
    }
    // below the threshold the refused job tries again after the first backoff, as a probe would
    return { open: b.openedAt !== null, retryInMs: b.openedAt ? Math.max(1000, b.nextProbeAt!.getTime() - now.getTime()) : s.probeAfterMs };
  });
}

/** Whether a job for the platform may go now (a closed breaker, or the one probe), or how long it waits; past `maxWaitMs` since `waitingSince`, it gives up. */
export async function platformTurn(em: EntityManager, platform: string, waitingSince: number, s: BreakerSettings, now = new Date()): Promise<PlatformTurn> {
  // every job asks: a closed breaker (the usual case) is one read, no transaction
  const seen = await em.findOne(PlatformBreaker, { platform });
  if (!seen?.openedAt) return { go: true, probe: false, tracked: seen !== null };
  return em.transactional(async (tx) => {
    const b = await tx.findOne(PlatformBreaker, { platform }, { refresh: true });
    if (!b?.openedAt) return { go: true, probe: false, tracked: b !== null };
    if (now.getTime() - waitingSince >= s.maxWaitMs) {
      return { go: false, expired: true, reason: b.lastReason ?? 'it refuses requests' };
    }
    const probeFree = !b.probeUntil || b.probeUntil.getTime() <= now.getTime();
    if (b.nextProbeAt && b.nextProbeAt.getTime() <= now.getTime() && probeFree) {
      b.probeUntil = new Date(now.getTime() + PROBE_HOLD_MS);
      b.updatedAt = now;
      return { go: true, probe: true, tracked: true };
    }
    const untilProbe = (b.nextProbeAt?.getTime() ?? now.getTime()) - now.getTime();
    const left = s.maxWaitMs - (now.getTime() - waitingSince);
    return { go: false, waitMs: Math.max(1000, Math.min(RECHECK_MS, untilProbe > 0 ? untilProbe : RECHECK_MS, left)) };
  });
}

/** A job for the platform got through: its breaker closes (and its count starts again). */
export async function recordSuccess(em: EntityManager, platform: string): Promise<void> {
  const b = await em.findOne(PlatformBreaker, { platform });
  if (!b) return;
  const wasOpen = b.openedAt !== null;
  await em.removeAndFlush(b);
  if (wasOpen) log.info({ platform }, `platform ${platform} answers again: its waiting jobs go on`);
}

export interface OpenBreaker {
  platform: string;
  since: string;
  next_probe_at: string | null;
  reason: string | null;
}

/** Platforms whose breaker is open now, for /readyz and /metrics. */
export async function openBreakers(em: EntityManager): Promise<OpenBreaker[]> {
  const rows = await em.find(PlatformBreaker, { openedAt: { $ne: null } }, { orderBy: { platform: 'asc' } });
  return rows.map((b) => ({ platform: b.platform, since: b.openedAt!.toISOString(), next_probe_at: b.nextProbeAt?.toISOString() ?? null, reason: b.lastReason }));
}

/** Platforms with a breaker row (refusals counted, or open). */
export async function trackedPlatforms(em: EntityManager): Promise<Set<string>> {
  const rows = await em.find(PlatformBreaker, {}, { fields: ['platform'] });
  return new Set(rows.map((r) => r.platform));
}

/** Whether the platform's breaker is open and its next probe not yet due (a periodic check then waits for it). */
export async function breakerHolds(em: EntityManager, platform: string, now = new Date()): Promise<string | null> {
  const b = await em.findOne(PlatformBreaker, { platform });
  if (!b?.openedAt || (b.nextProbeAt && b.nextProbeAt.getTime() <= now.getTime())) return null;
  return b.lastReason ?? 'it refuses requests';
}
