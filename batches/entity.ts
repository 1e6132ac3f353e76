import { EntitySchema } from '@mikro-orm/core';
import type { BatchSelection, BatchSource, BatchStatus } from './types';

export class Batch {
  id!: string;
  accountId!: string;
  /** An async operation's job type, or `list`. */
  operation!: string;
  /** The operation's fields for every item, without url. */
  parameters!: Record<string, unknown>;
  source!: BatchSource;
  selection!: BatchSelection;
  webhookUrl: string | null = null;
  status: BatchStatus = 'expanding';
  /** Why the source could not be expanded (failed). */
  error: string | null = null;
  /** What the expansion left out and why (a cap, a limit), for the reader. */
  note: string | null = null;
  /** What `list` was charged (an info read's cost); item jobs carry their own charges. */
  creditsCharged = 0;
  /** The subscription whose check found these items; null for a batch created by a client. */
  subscriptionId: string | null = null;
  createdAt: Date = new Date();
  completedAt: Date | null = null;
}

export const BatchEntitySchema = new EntitySchema<Batch>({
  class: Batch,
  tableName: 'batches',
  indexes: [{ properties: ['accountId', 'createdAt', 'id'] }, { properties: ['subscriptionId'] }],
  properties: {
    id: { type: 'string', primary: true, length: 36 },
    accountId: { type: 'string', length: 36 },
    operation: { type: 'string', length: 16 },
    parameters: { type: 'json' },
    source: { type: 'json' },
    selection: { type: 'json' },
    webhookUrl: { type: 'text', nullable: true },
    status: { type: 'string', length: 16 },
    error: { type: 'text', nullable: true },
    note: { type: 'text', nullable: true },
    creditsCharged: { type: 'integer' },
    subscriptionId: { type: 'string', length: 36, nullable: true },
    createdAt: { type: 'datetime', length: 3 },
    completedAt: { type: 'datetime', nullable: true },
  },
});

/**
 * `waiting`: no job yet; `created`: its job (job_id) says how it stands; `skipped`: never run, with a
 * reason; `listed`: an item of a `list` batch, which runs nothing.
 */
export type BatchItemState = 'waiting' | 'created' | 'skipped' | 'listed';

export class BatchItem {
  batchId!: string;
  /** Its place in the batch's order, from 0. */
  position!: number;
  url!: string;
  /** The source's identity of the item (a feed's guid, a playlist entry's id), else its URL. */
  identity!: string;
  title: string | null = null;
  publishedAt: Date | null = null;
  duration: number | null = null;
  thumbnail: string | null = null;
  state: BatchItemState = 'waiting';
  /** Set when its job is created: the id is fixed by the batch and position, so a retried step creates the same job. */
  jobId: string | null = null;
  reason: string | null = null;
}

export const BatchItemEntitySchema = new EntitySchema<BatchItem>({
  class: BatchItem,
  tableName: 'batch_items',
  indexes: [{ properties: ['batchId', 'state', 'position'] }],
  properties: {
    batchId: { type: 'string', primary: true, length: 36 },
    position: { type: 'integer', primary: true },
    url: { type: 'text' },
    identity: { type: 'text' },
    title: { type: 'text', nullable: true },
    publishedAt: { type: 'datetime', nullable: true },
    duration: { type: 'double', nullable: true },
    thumbnail: { type: 'text', nullable: true },
    state: { type: 'string', length: 16 },
    jobId: { type: 'string', length: 36, nullable: true },
    reason: { type: 'text', nullable: true },
  },
});
