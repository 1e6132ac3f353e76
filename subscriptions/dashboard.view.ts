import { html, safeHref, type Html } from '../api/dashboard/html';
import { confirmView, dataTable, dateTime, pager, postButton, statusBadge, type PageContext } from '../api/dashboard/views/layout';
import { formatSeconds } from '../lib/plans';
import type { SubscriptionResource } from './service';

function actions(page: PageContext, s: SubscriptionResource): Html {
  const base = `/dashboard/subscriptions/${s.subscription_id}`;
  const short = s.subscription_id.slice(0, 8);
  return html`<div class="row-actions">
${s.paused ? postButton(page, `${base}/resume`, 'Resume', { variant: 'primary', accessibleLabel: `Resume subscription ${short}` }) : postButton(page, `${base}/pause`, 'Pause', { accessibleLabel: `Pause subscription ${short}` })}
${s.paused ? '' : postButton(page, `${base}/check`, 'Check now', { accessibleLabel: `Check subscription ${short} now` })}
<a href="${base}/delete" class="button-danger-link" aria-label="Delete subscription ${short}">Delete</a>
</div>`;
}

export function subscriptionsView(page: PageContext, data: { subscriptions: SubscriptionResource[]; nextCursor: string | null; cursor: string | undefined }): Html {
  return html`<p>Each subscription checks its channel, playlist or feed on a Temporal Schedule and runs its operation once on every new item, as a <a href="/dashboard/batches">batch</a>. Create them with <code>POST /v1/subscriptions</code> or <code>create_subscription</code> over MCP.</p>
${dataTable({
  caption: 'Subscriptions, newest first',
  captionHidden: true,
  columns: [
    { label: 'Source', cell: (s: SubscriptionResource) => html`<a href="${safeHref(s.url)}" rel="noreferrer" class="truncate" title="${s.url}">${s.url}</a>` },
    { label: 'Operation', cell: (s) => s.operation },
    { label: 'State', cell: (s) => statusBadge(s.paused ? 'paused' : 'active') },
    { label: 'Every', cell: (s) => formatSeconds(s.check_every) },
    { label: 'Last check', cell: (s) => html`${dateTime(s.last_checked_at)}${s.last_error ? html`<br><span class="error-text">${s.last_error}</span>` : ''}` },
    { label: 'Next check', cell: (s) => dateTime(s.next_check_at) },
    { label: 'Seen / run', className: 'num', cell: (s) => `${s.items_seen} / ${s.items_run}` },
    { label: 'Actions', cell: (s) => actions(page, s) },
  ],
  rows: data.subscriptions,
  empty: 'No subscriptions yet.',
})}
${pager({ label: 'Subscription pages', firstHref: data.cursor ? '/dashboard/subscriptions' : null, nextHref: data.nextCursor ? `/dashboard/subscriptions?cursor=${encodeURIComponent(data.nextCursor)}` : null })}`;
}

export function deleteSubscriptionView(page: PageContext, s: SubscriptionResource): Html {
  return confirmView(page, {
    message: html`<p>Delete the subscription to <strong>${s.url}</strong>? Its schedule and its record of the ${s.items_seen} items it has seen go with it; the batches it made stay.</p>`,
    action: `/dashboard/subscriptions/${s.subscription_id}/delete`,
    confirmLabel: 'Delete subscription',
    cancelHref: '/dashboard/subscriptions',
  });
}
