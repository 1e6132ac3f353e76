import type { MikroORM } from '@mikro-orm/core';
import { setWaitingPlatform } from '../jobs/repository';
import type { Config } from '../lib/config';
import { log } from '../lib/logger';
import { platformTurn, recordRefusal, recordSuccess, trackedPlatforms, type PlatformTurn } from './breaker.repository';

/** How stale this worker's list of platforms with a breaker row may be (a job may start that long after one opened, and wait once refused). */
const KNOWN_TTL_MS = 2000;

export interface PlatformActivitiesDeps {
  orm: MikroORM;
  config: Pick<Config, 'platformBreaker'>;
}

/** The circuit breakers' steps of a job workflow (control queue, database only). Each is safe to retry. */
export function createPlatformActivities(deps: PlatformActivitiesDeps) {
  const { orm, config } = deps;
  // every job asks before it starts: the platforms with a breaker row (usually none) are read at
  // most every KNOWN_TTL_MS, so a burst of jobs costs no read each; a refusal here reads again at once
  let known: { at: number; platforms: Promise<Set<string>> } | null = null;
  const knownPlatforms = (): Promise<Set<string>> => {
    if (!known || Date.now() - known.at > KNOWN_TTL_MS) {
      const platforms = trackedPlatforms(orm.em.fork());
      known = { at: Date.now(), platforms };
      platforms.catch(() => (known = null));
    }
    return known.platforms;
  };
  return {
    /**
     * Whether the job may go to its platform now. While it must wait, the job is pending and holds
     * none of its account's running slots; when it may go, it waits no more.
     */
    async platformTurn(input: { jobId: string; platform: string; waitingSince: number; waited: boolean }): Promise<PlatformTurn> {
      if (!input.waited && !(await knownPlatforms()).has(input.platform)) return { go: true, probe: false, tracked: false };
      const turn = await platformTurn(orm.em.fork(), input.platform, input.waitingSince, config.platformBreaker);
      const waits = !turn.go && 'waitMs' in turn;
      if (waits || input.waited) await setWaitingPlatform(orm.em.fork(), input.jobId, waits ? input.platform : null);
      if (waits) log.debug({ job_id: input.jobId, platform: input.platform, wait_ms: turn.waitMs }, 'job waits for its platform');
      return turn;
    },

    /**
     * Counts the platform's refusal of this job, which goes back to pending to wait for it (holding
     * no running slot): `retryInMs` before it tries again, or `expired` once it has waited
     * PLATFORM_BREAKER_MAX_WAIT_SECONDS since `waitingSince`.
     */
    async platformRefused(input: { jobId: string; platform: string; reason: string; waitingSince: number }): Promise<{ open: boolean; retryInMs: number; expired: boolean }> {
      const state = await recordRefusal(orm.em.fork(), input.platform, input.reason, config.platformBreaker);
      known = null;
      const expired = Date.now() - input.waitingSince + state.retryInMs > config.platformBreaker.maxWaitMs;
      await setWaitingPlatform(orm.em.fork(), input.jobId, expired ? null : input.platform);
      log.info({ job_id: input.jobId, platform: input.platform, breaker: state.open ? 'open' : 'closed', retry_in_ms: state.retryInMs, expired }, expired ? 'job gives up waiting for its platform' : 'job waits for its platform');
      return { ...state, expired };
    },

    /** A job got through to its platform: an open breaker closes. */
    async platformWorked(platform: string): Promise<void> {
      await recordSuccess(orm.em.fork(), platform);
    },
  };
}
