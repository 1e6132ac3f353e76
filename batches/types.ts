// Batches at the workflow boundary: pure, so the workflow bundle can load it.
import type { PlanName } from '../lib/plans';

export const BATCH_STATUSES = ['expanding', 'running', 'completed', 'cancelled', 'failed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** An item as a batch read shows it: its job's status once it has one. */
export const BATCH_ITEM_STATUSES = ['pending', 'processing', 'completed', 'failed', 'skipped'] as const;
export type BatchItemStatus = (typeof BATCH_ITEM_STATUSES)[number];

/** `list` expands the source and runs nothing. */
export const LIST_OPERATION = 'list';

export type BatchOrder = 'newest' | 'oldest';

/** Where a batch's items come from: one collection URL, or URLs given one by one. */
export type BatchSource = { url: string } | { urls: string[] };

/** Which of the source's items a batch takes. */
export interface BatchSelection {
  maxItems: number;
  /** ISO dates, on the item's publication date; an item without a date is outside any such bound. */
  after: string | null;
  before: string | null;
  order: BatchOrder;
}

/** The batch workflow's input; `expanded` on a run continued as new, whose items are stored. */
export interface BatchInput {
  batchId: string;
  accountId: string;
  plan: PlanName;
  operation: string;
  source: BatchSource;
  selection: BatchSelection;
  expanded?: boolean;
  /** The history events after which a run continues as new (BATCH_HISTORY_EVENTS unless set: tests set fewer). */
  historyLimit?: number;
}

export interface BatchCounts {
  total: number;
  pending: number;
  processing: number;
  completed: number;
  failed: number;
  skipped: number;
}

/** One step of a running batch: how many items still wait for a job, and how many of its jobs have not ended. */
export interface BatchProgress {
  waiting: number;
  unfinished: number;
}

/** The Temporal workflow id of a batch's workflow. */
export const batchWorkflowId = (batchId: string): string => `batch-${batchId}`;

/** The signal POST /v1/batches/{id}/cancel sends to the batch's workflow. */
export const CANCEL_BATCH_SIGNAL = 'cancelBatch';
