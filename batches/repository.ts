// Queries of batches and their items. An item's status is its job's once it has one.
import type { EntityManager } from '@mikro-orm/core';
import { readRows } from '../db/bound-drivers';
import type { CollectionItem } from '../engines/collections/collection';
import { Batch, BatchItem, type BatchItemState } from './entity';
import { BATCH_ITEM_STATUSES, type BatchCounts, type BatchItemStatus } from './types';

/** A batch id as the API shows it (any other string names no batch). */
const BATCH_ID = /^[0-9a-f-]{36}$/i;

/** The account's batch, or null (other accounts' batches look exactly like unknown ones). */
export function findAccountBatch(em: EntityManager, accountId: string, batchId: string): Promise<Batch | null> {
  if (!BATCH_ID.test(batchId)) return Promise.resolve(null);
  return em.findOne(Batch, { id: batchId.toLowerCase(), accountId });
}

/** An item's status as a read shows it, in SQL (over `batch_items i left join jobs j`). */
const ITEM_STATUS_SQL = "case i.state when 'created' then coalesce(j.status, 'pending') when 'waiting' then 'pending' when 'listed' then 'completed' else i.state end";

/** The batch's items counted by status. */
export async function batchCounts(em: EntityManager, batchId: string): Promise<BatchCounts> {
  const rows = await readRows(em, `select ${ITEM_STATUS_SQL} as status, count(*) as n from batch_items i left join jobs j on j.id = i.job_id where i.batch_id = ? group by ${ITEM_STATUS_SQL}`, [batchId]);
  const counts: BatchCounts = { total: 0, pending: 0, processing: 0, completed: 0, failed: 0, skipped: 0 };
  for (const r of rows) {
    const n = Number(r.n);
    counts.total += n;
    if ((BATCH_ITEM_STATUSES as readonly string[]).includes(r.status as string)) counts[r.status as BatchItemStatus] += n;
  }
  return counts;
}

export interface ItemRow {
  position: number;
  url: string;
  title: string | null;
  publishedAt: Date | null;
  duration: number | null;
  thumbnail: string | null;
  status: BatchItemStatus;
  jobId: string | null;
  reason: string | null;
}

/** A page of the batch's items in order, after `afterPosition`. */
export async function listBatchItems(em: EntityManager, batchId: string, afterPosition: number, limit: number): Promise<ItemRow[]> {
  const rows = await readRows(
    em,
    `select i.position as position, i.url as url, i.title as title, i.published_at as published_at, i.duration as duration, i.thumbnail as thumbnail, ${ITEM_STATUS_SQL} as status, i.job_id as job_id, coalesce(i.reason, j.error_message) as reason
       from batch_items i left join jobs j on j.id = i.job_id where i.batch_id = ? and i.position > ? order by i.position limit ?`,
    [batchId, afterPosition, limit],
  );
  return rows.map((r) => ({
    position: Number(r.position),
    url: r.url as string,
    title: (r.title as string | null) ?? null,
    publishedAt: r.published_at === null || r.published_at === undefined ? null : new Date(r.published_at as string | number),
    duration: r.duration === null || r.duration === undefined ? null : Number(r.duration),
    thumbnail: (r.thumbnail as string | null) ?? null,
    status: r.status as BatchItemStatus,
    jobId: (r.job_id as string | null) ?? null,
    reason: (r.reason as string | null) ?? null,
  }));
}

/** The batch's next items that wait for a job, in order. */
export function waitingItems(em: EntityManager, batchId: string, limit: number): Promise<BatchItem[]> {
  return em.find(BatchItem, { batchId, state: 'waiting' }, { orderBy: { position: 'asc' }, limit });
}

/** How many of the batch's items wait for a job, and how many of its jobs have not ended. */
export async function batchProgress(em: EntityManager, batchId: string): Promise<{ waiting: number; unfinished: number }> {
  const [row] = await readRows(
    em,
    `select (select count(*) from batch_items where batch_id = ? and state = 'waiting') as waiting,
            (select count(*) from jobs where batch_id = ? and status in ('pending', 'processing')) as unfinished`,
    [batchId, batchId],
  );
  return { waiting: Number(row?.waiting ?? 0), unfinished: Number(row?.unfinished ?? 0) };
}

/** Items stored per insert. */
const INSERT_CHUNK = 500;

/** Stores a batch's items in order, from position 0 (inside the caller's transaction). */
export async function insertBatchItems(em: EntityManager, batchId: string, items: CollectionItem[], state: BatchItemState): Promise<void> {
  for (let i = 0; i < items.length; i += INSERT_CHUNK) {
    const rows = items.slice(i, i + INSERT_CHUNK).map((it, k) => ({
      batchId,
      position: i + k,
      url: it.url,
      identity: it.identity,
      title: it.title,
      publishedAt: it.publishedAt ? new Date(it.publishedAt) : null,
      duration: it.duration,
      thumbnail: it.thumbnail,
      state,
      jobId: null,
      reason: null,
    }));
    await em.insertMany(BatchItem, rows);
  }
}
