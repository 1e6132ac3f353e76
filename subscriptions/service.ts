// Subscriptions as every entry point sees them: create (a row and its Temporal Schedule), read, list,
// update (paused, interval, parameters), delete (the Schedule and the archive), check now.
import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { Account } from '../accounts/entity';
import type { ApiDeps } from '../api/context';
import { readRows } from '../db/bound-drivers';
import { checkOperationParameters } from '../batches/service';
import { assertReachable } from '../jobs/service';
import type { JobType } from '../jobs/types';
import { afterCursor, page } from '../lib/cursor';
import { DomainError } from '../lib/errors';
import { log } from '../lib/logger';
import { PLANS } from '../lib/plans';
import { parseInput } from '../lib/validation';
import { Subscription, SubscriptionItem } from './entity';
import { CreateSubscriptionSchema, UpdateSubscriptionSchema } from './schemas';
import type { SubscriptionScheduleSpec } from './types';

const SUBSCRIPTION_ID = /^[0-9a-f-]{36}$/i;

async function findAccountSubscription(em: EntityManager, accountId: string, id: string): Promise<Subscription> {
  const sub = SUBSCRIPTION_ID.test(id) ? await em.findOne(Subscription, { id: id.toLowerCase(), accountId }) : null;
  if (!sub) throw DomainError.notFound(`No subscription with id ${id} in this account`);
  return sub;
}

function scheduleOf(sub: Subscription): SubscriptionScheduleSpec {
  return { subscriptionId: sub.id, accountId: sub.accountId, operation: sub.operation, url: sub.url, checkEverySeconds: sub.checkEverySeconds, paused: sub.paused };
}

function checkInterval(deps: Pick<ApiDeps, 'config'>, seconds: number): void {
  const min = deps.config.subscriptionMinCheckSeconds;
  if (seconds < min) throw DomainError.invalidField('check_every', `must be at least ${min} seconds (SUBSCRIPTION_MIN_CHECK_SECONDS on this server)`);
}

/** A Schedule with `every` fires on its multiples since the Unix epoch. */
function nextCheckAt(sub: Subscription, now = Date.now()): string | null {
  if (sub.paused) return null;
  const every = sub.checkEverySeconds * 1000;
  return new Date(Math.floor(now / every) * every + every).toISOString();
}

/** The Subscription resource (docs/api.md). */
async function presentSubscription(em: EntityManager, sub: Subscription) {
  const [row] = await readRows(
    em,
    `select (select count(*) from subscription_items where subscription_id = ?) as seen,
            (select count(*) from jobs j join batches b on b.id = j.batch_id where b.subscription_id = ?) as run`,
    [sub.id, sub.id],
  );
  return {
    subscription_id: sub.id,
    url: sub.url,
    operation: sub.operation,
    parameters: sub.parameters,
    check_every: sub.checkEverySeconds,
    start_after: sub.startAfter.toISOString(),
    webhook_url: sub.webhookUrl,
    paused: sub.paused,
    last_checked_at: sub.lastCheckedAt?.toISOString() ?? null,
    next_check_at: nextCheckAt(sub),
    last_error: sub.lastError,
    items_seen: Number(row?.seen ?? 0),
    items_run: Number(row?.run ?? 0),
    created_at: sub.createdAt.toISOString(),
  };
}

export type SubscriptionResource = Awaited<ReturnType<typeof presentSubscription>>;

export async function createSubscription(em: EntityManager, deps: ApiDeps, account: Account, body: unknown): Promise<SubscriptionResource> {
  const req = parseInput(CreateSubscriptionSchema, body);
  checkInterval(deps, req.check_every);
  checkOperationParameters(deps, req.operation as JobType, req.parameters, req.url);
  await assertReachable('url', req.url, deps.config.allowPrivateNetwork);
  if (req.webhook_url) await assertReachable('webhook_url', req.webhook_url, deps.config.allowPrivateNetwork);
  const cap = PLANS[account.plan].maxSubscriptions;
  if ((await em.count(Subscription, { accountId: account.id })) >= cap) throw new DomainError('forbidden', `The ${account.plan} plan allows ${cap} subscriptions; delete one or upgrade the plan`);
  const now = new Date();
  const sub = em.create(Subscription, {
    id: crypto.randomUUID(),
    accountId: account.id,
    url: req.url,
    operation: req.operation,
    parameters: req.parameters,
    checkEverySeconds: req.check_every,
    startAfter: req.start_after === 'now' ? now : new Date(req.start_after),
    webhookUrl: req.webhook_url ?? null,
    paused: false,
    failures: 0,
    checks: 0,
    createdAt: now,
  });
  await em.flush();
  try {
    await deps.orchestrator.upsertSubscriptionSchedule(scheduleOf(sub));
  } catch (err) {
    // no Schedule, no subscription: the client retries the create
    await em.nativeDelete(Subscription, { id: sub.id });
    throw err;
  }
  log.info({ subscription_id: sub.id, account_id: account.id, operation: sub.operation, check_every: sub.checkEverySeconds }, 'subscription created');
  return presentSubscription(em, sub);
}

export async function getSubscription(em: EntityManager, account: Account, id: string): Promise<SubscriptionResource> {
  return presentSubscription(em, await findAccountSubscription(em, account.id, id));
}

export async function listSubscriptions(em: EntityManager, account: Account, query: { cursor?: string; limit: number }) {
  const where = { accountId: account.id, ...(query.cursor ? afterCursor(query.cursor) : {}) };
  const rows = await em.find(Subscription, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: query.limit + 1 });
  const p = page(rows, query.limit);
  return { ...p, items: await Promise.all(p.items.map((s) => presentSubscription(em, s))) };
}

export async function updateSubscription(em: EntityManager, deps: ApiDeps, account: Account, id: string, body: unknown): Promise<SubscriptionResource> {
  const sub = await findAccountSubscription(em, account.id, id);
  const req = parseInput(UpdateSubscriptionSchema, body);
  if (req.check_every !== undefined) checkInterval(deps, req.check_every);
  if (req.parameters !== undefined) checkOperationParameters(deps, sub.operation as JobType, req.parameters, sub.url);
  const before = { paused: sub.paused, checkEverySeconds: sub.checkEverySeconds };
  if (req.paused !== undefined) sub.paused = req.paused;
  // resumed by the account: a source that had failed is checked again at once, from a clean count
  if (req.paused === false && before.paused) sub.failures = 0;
  if (req.check_every !== undefined) sub.checkEverySeconds = req.check_every;
  if (req.parameters !== undefined) sub.parameters = req.parameters;
  if (sub.paused !== before.paused || sub.checkEverySeconds !== before.checkEverySeconds) await deps.orchestrator.upsertSubscriptionSchedule(scheduleOf(sub));
  await em.flush();
  return presentSubscription(em, sub);
}

export async function deleteSubscription(em: EntityManager, deps: ApiDeps, account: Account, id: string): Promise<void> {
  const sub = await findAccountSubscription(em, account.id, id);
  await deps.orchestrator.deleteSubscriptionSchedule(sub.id);
  await em.transactional(async (tx) => {
    await tx.nativeDelete(SubscriptionItem, { subscriptionId: sub.id });
    await tx.nativeDelete(Subscription, { id: sub.id });
  });
  log.info({ subscription_id: sub.id, account_id: account.id }, 'subscription deleted');
}

/** Runs a check now (202): a paused subscription is 409. */
export async function checkSubscriptionNow(em: EntityManager, deps: ApiDeps, account: Account, id: string): Promise<SubscriptionResource> {
  const sub = await findAccountSubscription(em, account.id, id);
  if (sub.paused) throw DomainError.conflict(`Subscription ${sub.id} is paused; resume it (PATCH paused: false) to check it`);
  await deps.orchestrator.triggerSubscriptionSchedule(sub.id);
  return presentSubscription(em, sub);
}
