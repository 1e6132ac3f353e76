import { html, safeHref, type Html } from '../api/dashboard/html';
import { dataTable, dateTime, pager, postButton, statusBadge, type PageContext } from '../api/dashboard/views/layout';
import type { getBatch, listBatches } from './service';

type BatchPage = Awaited<ReturnType<typeof getBatch>>;
type BatchSummary = Awaited<ReturnType<typeof listBatches>>['items'][number];

/** Items that have ended (completed, failed, skipped) out of all. */
function doneOf(b: Pick<BatchSummary, 'counts'>): number {
  return b.counts.completed + b.counts.failed + b.counts.skipped;
}

function progress(b: BatchSummary): Html {
  const { total } = b.counts;
  return html`<progress max="${total || 1}" value="${doneOf(b)}" aria-label="Items ended of batch ${b.batch_id.slice(0, 8)}">${doneOf(b)} of ${total}</progress> ${doneOf(b)} / ${total}`;
}

const sourceText = (b: BatchSummary) => ('url' in b.source ? b.source.url : `${b.source.urls.length} URLs`);

export function batchesListView(page: PageContext, data: { batches: BatchSummary[]; nextCursor: string | null; cursor: string | undefined }): Html {
  return html`<p>Batches run one operation on every item of a feed, playlist, channel, page or URL list (<code>POST /v1/batches</code>, or <code>start_batch</code> over MCP); subscriptions make one per check.</p>
${dataTable({
  caption: 'Batches, newest first',
  captionHidden: true,
  columns: [
    { label: 'Batch', cell: (b: BatchSummary) => html`<a href="/dashboard/batches/${b.batch_id}"><code>${b.batch_id.slice(0, 8)}</code></a>` },
    { label: 'Operation', cell: (b) => b.operation },
    { label: 'Status', cell: (b) => statusBadge(b.status) },
    { label: 'Items ended', cell: (b) => progress(b) },
    { label: 'Failed', className: 'num', cell: (b) => b.counts.failed },
    { label: 'Source', cell: (b) => html`<span class="truncate" title="${sourceText(b)}">${sourceText(b)}</span>` },
    { label: 'Created', cell: (b) => dateTime(b.created_at) },
  ],
  rows: data.batches,
  empty: 'No batches yet.',
})}
${pager({ label: 'Batch pages', firstHref: data.cursor ? '/dashboard/batches' : null, nextHref: data.nextCursor ? `/dashboard/batches?cursor=${encodeURIComponent(data.nextCursor)}` : null })}`;
}

export function batchView(page: PageContext, b: BatchPage, cursor: string | undefined): Html {
  const running = b.status === 'expanding' || b.status === 'running';
  const c = b.counts;
  return html`<section aria-labelledby="batch-summary">
<h2 id="batch-summary">${b.operation} on ${sourceText(b)}</h2>
<p>${statusBadge(b.status)} ${progress(b)}</p>
<dl class="facts">
<div><dt>Completed</dt><dd>${c.completed}</dd></div><div><dt>Failed</dt><dd>${c.failed}</dd></div><div><dt>Skipped</dt><dd>${c.skipped}</dd></div>
<div><dt>Processing</dt><dd>${c.processing}</dd></div><div><dt>Waiting</dt><dd>${c.pending}</dd></div>
<div><dt>Created</dt><dd>${dateTime(b.created_at)}</dd></div>${b.completed_at ? html`<div><dt>Ended</dt><dd>${dateTime(b.completed_at)}</dd></div>` : ''}
${b.subscription_id ? html`<div><dt>Subscription</dt><dd><a href="/dashboard/subscriptions"><code>${b.subscription_id.slice(0, 8)}</code></a></dd></div>` : ''}
</dl>
${b.error ? html`<div class="error-summary" role="alert"><p>${b.error}</p></div>` : ''}
${b.note ? html`<p class="help">${b.note}</p>` : ''}
${running ? html`<div class="button-row">${postButton(page, `/dashboard/batches/${b.batch_id}/cancel`, 'Cancel unfinished items', { variant: 'danger' })}</div>` : ''}
</section>
${dataTable({
  caption: 'Items in order',
  columns: [
    { label: 'Item', cell: (i: BatchPage['items'][number]) => html`<a href="${safeHref(i.url)}" rel="noreferrer" class="truncate" title="${i.url}">${i.title ?? i.url}</a>` },
    { label: 'Published', cell: (i) => dateTime(i.published_at) },
    { label: 'Status', cell: (i) => statusBadge(i.status) },
    { label: 'Job', cell: (i) => (i.job_id ? html`<a href="/dashboard/jobs/${i.job_id}"><code>${i.job_id.slice(0, 8)}</code></a>` : '—') },
    { label: 'Why', cell: (i) => i.reason ?? '' },
  ],
  rows: b.items,
  empty: b.status === 'expanding' ? 'The source is being expanded.' : 'No items.',
})}
${pager({ label: 'Item pages', firstHref: cursor ? `/dashboard/batches/${b.batch_id}` : null, nextHref: b.next_cursor ? `/dashboard/batches/${b.batch_id}?cursor=${encodeURIComponent(b.next_cursor)}` : null })}`;
}
