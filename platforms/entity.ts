import { EntitySchema } from '@mikro-orm/core';

/**
 * A platform's circuit breaker: the refusals counted in the current window, and while open, when
 * the next probe may go and how long the wait doubles to. No row: closed, nothing counted.
 */
export class PlatformBreaker {
  platform!: string;
  refusals = 0;
  windowStartedAt: Date = new Date();
  /** Set while the breaker is open. */
  openedAt: Date | null = null;
  /** While open: no job goes to the platform before this, except as the one probe. */
  nextProbeAt: Date | null = null;
  backoffMs = 0;
  /** A probe in flight until this (another job may probe once it has passed). */
  probeUntil: Date | null = null;
  /** The last refusal, as a person reads it. */
  lastReason: string | null = null;
  updatedAt: Date = new Date();
}

export const PlatformBreakerEntitySchema = new EntitySchema<PlatformBreaker>({
  class: PlatformBreaker,
  tableName: 'platform_breakers',
  properties: {
    platform: { type: 'string', primary: true, length: 253 },
    refusals: { type: 'integer' },
    windowStartedAt: { type: 'datetime' },
    openedAt: { type: 'datetime', nullable: true },
    nextProbeAt: { type: 'datetime', nullable: true },
    backoffMs: { type: 'integer' },
    probeUntil: { type: 'datetime', nullable: true },
    lastReason: { type: 'text', nullable: true },
    updatedAt: { type: 'datetime' },
  },
});
