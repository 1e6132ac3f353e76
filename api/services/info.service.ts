import type { EntityManager } from '@mikro-orm/core';
import type { Account } from '../../db/account.entity';
import { chargeCredits, currentBalance } from '../../db/credits.repository';
import { DomainError } from '../../lib/errors';
import type { VideoInfo } from '../../lib/video-info';
import type { ApiDeps } from '../context';
import { assertReachable } from './jobs.service';
import { creditsCharged } from '../../lib/metrics';
import { InfoError } from './orchestrator';

export const INFO_COST = 1;

/** The synchronous metadata read: 1 credit, charged only when the answer is ready (decisions.md). */
export async function readVideoInfo(em: EntityManager, deps: Pick<ApiDeps, 'orchestrator' | 'config'>, account: Account, url: string): Promise<VideoInfo> {
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
    throw new DomainError('upstream', `The source could not be read: ${err.message}`);
  }
  await chargeCredits(em, account.id, INFO_COST, 'an info call', async () => ({ jobId: null, value: null }));
  creditsCharged.inc({ for: 'info' }, INFO_COST);
  return info;
}
