// Subscriptions at the workflow boundary: pure, so the workflow bundle can load it.
import type { BatchInput } from '../batches/types';

/** Consecutive failed checks after which a subscription pauses itself (and sends subscription.paused). */
export const SUBSCRIPTION_MAX_FAILURES = 5;
/** A failing source is checked again after its interval times 2^(failures - 1), at most this long. */
export const SUBSCRIPTION_MAX_BACKOFF_SECONDS = 24 * 3600;
/** The longest check_every. */
export const SUBSCRIPTION_MAX_CHECK_SECONDS = 30 * 24 * 3600;

/** The Temporal Schedule of a subscription. */
export const subscriptionScheduleId = (subscriptionId: string): string => `subscription-${subscriptionId}`;

export interface SubscriptionCheckInput {
  subscriptionId: string;
}

/** What a check does: nothing (paused, gone, backing off), or expand the source under `checkId`. */
export type CheckPlan = { run: false; why: string } | { run: true; checkId: string; url: string; maxItems: number };

/** What a check found: a batch of its new items to run, or none. */
export interface CheckOutcome {
  newItems: number;
  batch: BatchInput | null;
}

/** The schedule's side of a subscription, as the API keeps it in step. */
export interface SubscriptionScheduleSpec {
  subscriptionId: string;
  accountId: string;
  operation: string;
  url: string;
  checkEverySeconds: number;
  paused: boolean;
}
