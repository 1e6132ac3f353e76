// A subscription's check on the control queue: whether to check now (paused, gone, backing off), what
// the expanded source holds that the archive has not seen (recorded, and run as a batch of the
// subscription, in one transaction), and a failed check (backing off, pausing after too many).
import crypto from 'node:crypto';
import type { MikroORM } from '@mikro-orm/core';
import type { CollectionItem } from '../engines/collections/collection';
import type { Storage } from '../engines/storage';
import type { Config } from '../lib/config';
import { log } from '../lib/logger';
import { PLANS } from '../lib/plans';
import { Account } from '../accounts/entity';
import { Batch } from '../batches/entity';
import { insertBatchItems } from '../batches/repository';
import type { BatchInput, BatchSelection } from '../batches/types';
import { subscribedEndpoints } from '../webhooks/repository';
import { breakerHolds, recordRefusal, recordSuccess } from '../platforms/breaker.repository';
import { platformOfUrl } from '../lib/source-sites';
import type { EventPlan, EventTarget } from '../webhooks/activities';
import { Subscription, SubscriptionItem } from './entity';
import { SUBSCRIPTION_MAX_BACKOFF_SECONDS, SUBSCRIPTION_MAX_FAILURES, subscriptionScheduleId, type CheckOutcome, type CheckPlan } from './types';

export interface SubscriptionActivityDeps {
  orm: MikroORM;
  storage: Storage;
  config: Pick<Config, 'webhookRetryScheduleMs' | 'platformBreaker'>;
  /** Pauses a Schedule (a subscription that keeps failing), through the process's Temporal client. */
  pauseSchedule?: (scheduleId: string, note: string) => Promise<void>;
}

/** Whether an item not yet seen runs: dated after start_after, or undated and found after the first check. */
export function runsNow(item: CollectionItem, startAfter: Date, firstCheck: boolean): boolean {
  if (item.publishedAt) return Date.parse(item.publishedAt) > startAfter.getTime();
  return !firstCheck;
}

export function createSubscriptionActivities(deps: SubscriptionActivityDeps) {
  const { orm, storage, config } = deps;

  return {
    /** Whether this check runs: not for a paused or deleted subscription, nor while a failing source backs off. */
    async beginSubscriptionCheck(input: { subscriptionId: string }): Promise<CheckPlan> {
      const em = orm.em.fork();
      const sub = await em.findOne(Subscription, input.subscriptionId);
      if (!sub) return { run: false, why: 'deleted' };
      if (sub.paused) return { run: false, why: 'paused' };
      if (sub.failures > 0 && sub.lastCheckedAt) {
        const wait = Math.min(sub.checkEverySeconds * 2 ** (sub.failures - 1), SUBSCRIPTION_MAX_BACKOFF_SECONDS);
        // the schedule fires on whole intervals: a little slack so a check due at the next one is not skipped
        if (Date.now() < sub.lastCheckedAt.getTime() + wait * 1000 - 500) return { run: false, why: 'backing off' };
      }
      // a platform that refuses the service is left alone until its breaker's next probe, as its jobs are
      const platform = platformOfUrl(sub.url);
      if (platform && (await breakerHolds(em, platform))) return { run: false, why: `${platform} is refusing requests` };
      const account = await em.findOneOrFail(Account, sub.accountId);
      return { run: true, checkId: crypto.randomUUID(), url: sub.url, maxItems: PLANS[account.plan].maxBatchItems };
    },

    /**
     * Records what the check found that the archive has not seen, and makes the items that run a batch
     * of the subscription, all in one transaction: a retried step finds its batch and returns it.
     */
    async recordSubscriptionCheck(input: { subscriptionId: string; checkId: string; file: string }): Promise<CheckOutcome> {
      const em = orm.em.fork();
      let sourceUrl: string | null = null;
      const outcome = await em.transactional(async (tx): Promise<CheckOutcome> => {
        const sub = await tx.findOne(Subscription, input.subscriptionId);
        if (!sub) return { newItems: 0, batch: null };
        sourceUrl = sub.url;
        const account = await tx.findOneOrFail(Account, sub.accountId);
        const selection: BatchSelection = { maxItems: PLANS[account.plan].maxBatchItems, after: sub.startAfter.toISOString(), before: null, order: 'newest' };
        const batchOf = (b: Batch): BatchInput => ({ batchId: b.id, accountId: b.accountId, plan: account.plan, operation: b.operation, source: b.source, selection: b.selection, expanded: true });
        const done = await tx.findOne(Batch, input.checkId);
        if (done) return { newItems: 0, batch: batchOf(done) };
        const text = await storage.readOutputText(input.file);
        if (text === null) throw new Error(`the expanded items of check ${input.checkId} are not in storage`);
        const listed = (JSON.parse(text) as { items: CollectionItem[] }).items;
        const seen = new Set((await tx.find(SubscriptionItem, { subscriptionId: sub.id }, { fields: ['identity'] })).map((i) => i.identity));
        const fresh = listed.filter((i) => !seen.has(i.identity));
        const run = fresh.filter((i) => runsNow(i, sub.startAfter, sub.checks === 0));
        const now = new Date();
        const runIds = new Set(run.map((i) => i.identity));
        if (fresh.length) await tx.insertMany(SubscriptionItem, fresh.map((i) => ({ subscriptionId: sub.id, identity: i.identity, seenAt: now, batchId: runIds.has(i.identity) ? input.checkId : null })));
        let batch: Batch | null = null;
        if (run.length) {
          batch = tx.create(Batch, {
            id: input.checkId,
            accountId: sub.accountId,
            operation: sub.operation,
            parameters: sub.parameters,
            source: { url: sub.url },
            selection,
            webhookUrl: sub.webhookUrl,
            status: 'running',
            creditsCharged: 0,
            subscriptionId: sub.id,
            createdAt: now,
          });
          await tx.flush();
          // oldest first: episodes run in the order they came out
          await insertBatchItems(tx, batch.id, [...run].reverse(), 'waiting');
        }
        sub.checks += 1;
        sub.lastCheckedAt = now;
        sub.failures = 0;
        sub.lastError = null;
        await tx.flush();
        return { newItems: run.length, batch: batch ? batchOf(batch) : null };
      });
      await storage.removeOutput(`batch-${input.checkId}`).catch(() => undefined);
      // the source answered: a platform breaker open for its site closes, as a job getting through closes it
      const platform = sourceUrl ? platformOfUrl(sourceUrl) : null;
      if (platform) await recordSuccess(orm.em.fork(), platform);
      log.info({ subscription_id: input.subscriptionId, new_items: outcome.newItems, batch_id: outcome.batch?.batchId ?? null }, 'subscription checked');
      return outcome;
    },

    /** A check whose source failed: the subscription backs off, and after SUBSCRIPTION_MAX_FAILURES in a row pauses itself. */
    async subscriptionCheckFailed(input: { subscriptionId: string; message: string; refused?: boolean }): Promise<{ paused: boolean }> {
      const em = orm.em.fork();
      const sub = await em.findOne(Subscription, input.subscriptionId);
      if (!sub) return { paused: false };
      const platform = platformOfUrl(sub.url);
      if (input.refused && platform) await recordRefusal(orm.em.fork(), platform, input.message, config.platformBreaker);
      sub.failures += 1;
      sub.lastError = input.message;
      sub.lastCheckedAt = new Date();
      const pauses = !sub.paused && sub.failures >= SUBSCRIPTION_MAX_FAILURES;
      if (pauses) sub.paused = true;
      await em.flush();
      log.warn({ subscription_id: sub.id, failures: sub.failures, error: input.message, paused: sub.paused }, 'subscription check failed');
      if (pauses) await deps.pauseSchedule?.(subscriptionScheduleId(sub.id), `paused after ${sub.failures} failed checks: ${input.message}`);
      return { paused: pauses };
    },

    /** subscription.paused's body and targets: the account's subscribed endpoints and the subscription's webhook_url. */
    async planSubscriptionEvent(input: { subscriptionId: string }): Promise<EventPlan> {
      const em = orm.em.fork();
      const sub = await em.findOneOrFail(Subscription, input.subscriptionId);
      const event = 'subscription.paused';
      const body = JSON.stringify({
        event,
        timestamp: new Date().toISOString(),
        data: { subscription_id: sub.id, url: sub.url, operation: sub.operation, paused: sub.paused, failures: sub.failures, last_error: sub.lastError, last_checked_at: sub.lastCheckedAt?.toISOString() ?? null },
      });
      const targets: EventTarget[] = (await subscribedEndpoints(em, sub.accountId, event)).map((e) => ({ key: `ep${e.id}`, webhookId: e.id, url: e.url }));
      if (sub.webhookUrl) targets.push({ key: 'subscription', webhookId: null, url: sub.webhookUrl });
      return { accountId: sub.accountId, body, targets, scheduleMs: config.webhookRetryScheduleMs };
    },
  };
}

export type SubscriptionActivities = ReturnType<typeof createSubscriptionActivities>;
