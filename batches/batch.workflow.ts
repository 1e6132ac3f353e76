import { condition, continueAsNew, defineSignal, setHandler, workflowInfo } from '@temporalio/workflow';
import { failureOf } from '../jobs/media-job.workflow';
import { control, mediaInfoExpansion } from '../workflows/activity-proxies';
import { startEventDeliveries } from '../workflows/event-deliveries';
import { CANCEL_BATCH_SIGNAL, LIST_OPERATION, type BatchCounts, type BatchInput } from './types';

/** Sent by POST /v1/batches/{id}/cancel. */
export const cancelBatchSignal = defineSignal(CANCEL_BATCH_SIGNAL);

/** How often a running batch looks at its jobs: each check creates jobs for the slots freed since. */
const CHECK_EVERY = '2 seconds';
/** A run's history stays under this many events; the batch then continues as new (its items are in the database). */
export const BATCH_HISTORY_EVENTS = 2_000;
/** How long a cancelled batch waits for its jobs' workflows to end them, before it ends itself. */
const CANCEL_SETTLE_CHECKS = 30;

/**
 * One batch: its source expanded once (on a media-info worker), its items stored, then their jobs
 * created a window at a time as earlier ones end, until every item has ended or was skipped. Each
 * item is an ordinary job (its own charge, refund and events); batch.completed carries the counts.
 */
export async function batchWorkflow(input: BatchInput & { cancelRequested?: boolean }): Promise<BatchCounts> {
  let cancelRequested = input.cancelRequested ?? false;
  setHandler(cancelBatchSignal, () => {
    cancelRequested = true;
  });
  const { batchId } = input;
  let expanded = input.expanded ?? false;
  if (!expanded) {
    try {
      const expansion = await mediaInfoExpansion.expandBatchSource({ batchId, source: input.source, selection: input.selection });
      await control.storeBatchItems({ batchId, file: expansion.file, note: expansion.note });
      expanded = true;
    } catch (err) {
      await control.failBatchExpansion({ batchId, message: failureOf(err).message });
    }
  }
  if (expanded && input.operation !== LIST_OPERATION) {
    let cancelSent = false;
    for (let settle = 0; ; ) {
      if (cancelRequested) {
        if (!cancelSent) await control.cancelBatchItems({ batchId });
        cancelSent = true;
        // the cancelled jobs end through their own workflows, each refunded once; the batch ends after them
        if ((await control.startBatchItems({ batchId })).unfinished === 0 || ++settle >= CANCEL_SETTLE_CHECKS) break;
      } else {
        const progress = await control.startBatchItems({ batchId });
        if (progress.waiting === 0 && progress.unfinished === 0) break;
      }
      await condition(() => cancelRequested && !cancelSent, CHECK_EVERY);
      const info = workflowInfo();
      if (info.historyLength > (input.historyLimit ?? BATCH_HISTORY_EVENTS) || info.continueAsNewSuggested) {
        await continueAsNew<typeof batchWorkflow>({ ...input, expanded: true, cancelRequested });
      }
    }
  }
  const counts = await control.finishBatch({ batchId, cancelled: cancelRequested });
  await startBatchEventDeliveries(batchId);
  return counts;
}

/** batch.completed to each target, as its own delivery workflow (ids stable per batch and target: never sent twice). */
async function startBatchEventDeliveries(batchId: string): Promise<void> {
  await startEventDeliveries(await control.planBatchEvent({ batchId }), 'batch.completed', batchId, batchId);
}
