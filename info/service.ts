import type { EntityManager } from '@mikro-orm/core';
import { PLANS, type Account } from '../accounts/entity';
import { chargeCredits, currentBalance } from '../credits/repository';
import { DomainError } from '../lib/errors';
import type { VideoInfo } from '../lib/video-info';
import type { ApiDeps } from '../api/context';
import { assertReachable } from '../jobs/service';
import { creditsCharged } from '../lib/metrics';
import { InfoError } from '../jobs/orchestrator';

export const INFO_COST = 1;

/** Info reads in flight in this API process, per account. Failed reads are free, so they are capped by plan. */
const readsInFlight = new Map<string, number>();

/** The synchronous metadata read: 1 credit, charged only when the answer is ready; at most the plan's maxInfoReads at once. */
export async function readVideoInfo(em: EntityManager, deps: Pick<ApiDeps, 'orchestrator' | 'config'>, account: Account, url: string): Promise<VideoInfo> {
  const cap = PLANS[account.plan].maxInfoReads;
  const inFlight = readsInFlight.get(account.id) ?? 0;
  if (inFlight >= cap) {
    throw new DomainError('rate_limited', `${inFlight} info reads of this account are already in progress, the most the ${account.plan} plan allows at once; retry when one has answered.`, { retryAfterSeconds: 1 });
  }
  readsInFlight.set(account.id, inFlight + 1);
  try {
    return await readInfoCharged(em, deps, account, url);
  } finally {
    const left = (readsInFlight.get(account.id) ?? 1) - 1;
    if (left > 0) readsInFlight.set(account.id, left);
    else readsInFlight.delete(account.id);
  }
}

async function readInfoCharged(em: EntityManager, deps: Pick<ApiDeps, 'orchestrator' | 'config'>, account: Account, url: string): Promise<VideoInfo> {
  await assertReachable('url', url, deps.config.allowPrivateNetwork);
  const balance = await currentBalance(em, account.id);
  if (balance < INFO_COST) throw new DomainError('insufficient_credits', `An info call costs ${INFO_COST} credit but the balance is ${balance}; add credits or upgrade the plan.`);
  let info: VideoInfo;
  try {
    info = await deps.orchestrator.fetchInfo(url, { accountId: account.id, plan: account.plan });
  } catch (err) {
    if (!(err instanceof InfoError)) throw new DomainError('unavailable', `The job engine is unavailable; try again shortly. (${(err as Error).message})`);
    if (err.kind === 'unsupported' || err.kind === 'unavailable') throw DomainError.notFound(err.message);
    if (err.kind === 'rejected') throw DomainError.invalid(err.message, [{ field: 'url', message: err.message }]);
    if (err.kind === 'timeout') throw new DomainError('timeout', `${err.message}; try again later`);
    if (err.kind === 'refused') throw new DomainError('unavailable', `${err.message}; try again later`);
    throw new DomainError('upstream', `The source could not be read: ${err.message}`);
  }
  await chargeCredits(em, account.id, INFO_COST, 'an info call', async () => ({ jobId: null, value: null }));
  creditsCharged.inc({ for: 'info' }, INFO_COST);
  return info;
}
