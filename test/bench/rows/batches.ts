// Batches: a batch of BENCH_BATCH_ITEMS fingerprint jobs on the 10 s clip, its time per item beside
// one fingerprint job on its own, and a `list` of a 10,000-URL list; for each, the longest history of
// any run of the batch's workflow (it continues as new before BATCH_HISTORY_EVENTS).
import { waitFor } from '../../helpers/processes';
import { BATCH_HISTORY_EVENTS } from '../../../batches/batch.workflow';
import { fmt, type BenchContext, type BenchRow } from '../harness';

const ITEMS = Number(process.env.BENCH_BATCH_ITEMS ?? 200);
const LISTED = 10_000;

async function ended(ctx: BenchContext, path: string, done: (body: any) => boolean, timeoutMs: number): Promise<any> {
  return waitFor(path, async () => {
    const { body } = await ctx.stack.api('GET', path);
    return done(body) ? body : undefined;
  }, timeoutMs, 250);
}

/** The most events any run of the batch's workflow recorded, and how many runs it had. */
async function histories(ctx: BenchContext, batchId: string): Promise<{ maxEvents: number; runs: number }> {
  let maxEvents = 0;
  let runs = 0;
  for await (const run of ctx.temporal.workflow.list({ query: `WorkflowId = "batch-${batchId}"` })) {
    runs++;
    const history = await ctx.temporal.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    maxEvents = Math.max(maxEvents, history.events?.length ?? 0);
  }
  return { maxEvents, runs };
}

async function batch(ctx: BenchContext, body: Record<string, unknown>, timeoutMs: number): Promise<{ seconds: number; id: string; status: string }> {
  const t0 = Date.now();
  const res = await ctx.stack.api('POST', '/v1/batches', body);
  if (res.status !== 202) throw new Error(`POST /v1/batches answered ${res.status}: ${JSON.stringify(res.body)}`);
  const b = await ended(ctx, `/v1/batches/${res.body.batch_id}?limit=1`, (x) => ['completed', 'failed', 'cancelled'].includes(x.status), timeoutMs);
  return { seconds: (Date.now() - t0) / 1000, id: res.body.batch_id, status: b.status };
}

const row: BenchRow = {
  name: 'batches',
  order: 60,
  async measure(ctx) {
    const t0 = Date.now();
    const single = await ctx.stack.api('POST', '/v1/fingerprint', { url: ctx.files.url('clip10.mp4') });
    await ended(ctx, `/v1/jobs/${single.body.job_id}`, (j) => j.status === 'completed' || j.status === 'failed', 120_000);
    const singleS = (Date.now() - t0) / 1000;
    await ctx.quiesce();
    // distinct URLs (a query each) of the same clip: every item is its own job
    const urls = Array.from({ length: ITEMS }, (_, i) => `${ctx.files.url('clip10.mp4')}?item=${i}`);
    const run = await batch(ctx, { operation: 'fingerprint', source: { urls } }, ITEMS * 30_000);
    const runHistory = await histories(ctx, run.id);
    const listed = await batch(ctx, { operation: 'list', source: { urls: Array.from({ length: LISTED }, (_, i) => `${ctx.files.url('clip10.mp4')}?n=${i}`) } }, 300_000);
    const listHistory = await histories(ctx, listed.id);
    return { singleS, perItemS: run.seconds / ITEMS, batchS: run.seconds, batchEvents: runHistory.maxEvents, batchRuns: runHistory.runs, listS: listed.seconds, listEvents: listHistory.maxEvents };
  },
  report: (m) => [
    { what: `A fingerprint batch of ${ITEMS} items: time per item (the whole batch ${fmt.s(m.batchS!)}), vs one fingerprint job on its own`, product: fmt.s(m.perItemS!), peer: fmt.s(m.singleS!), ratio: fmt.ratio(m.perItemS!, m.singleS!) },
    { what: `  its workflow: runs (continue-as-new) and the most events in one (limit ${BATCH_HISTORY_EVENTS})`, product: `${m.batchRuns} runs, ${m.batchEvents} events`, peer: '', ratio: '' },
    { what: `A list of ${LISTED.toLocaleString('en')} URLs: expanded and stored, and its workflow's events`, product: `${fmt.s(m.listS!)}, ${m.listEvents} events`, peer: '', ratio: '' },
  ],
};

export const rows = [row];
