import type { CreditEntry } from './entity';
import type { accountSummary } from '../accounts/service';
import type { JobResource } from '../jobs/service';
import { html, queryString, type Html } from '../api/dashboard/html';
import { stackedBars, type Series } from '../api/dashboard/views/charts';
import { dataTable, dateTime, pager, statusBadge, type PageContext } from '../api/dashboard/views/layout';

export type AccountSummary = Awaited<ReturnType<typeof accountSummary>>;

const number = (n: number) => n.toLocaleString('en-US');

/** Balance, plan, rate limit, allowance, next top-up and jobs running and queued as a row of cards. */
export function summaryCards(summary: AccountSummary): Html {
  const cards: [string, Html | string][] = [
    ['Balance', html`<span class="big">${number(summary.balance)}</span> credits`],
    ['Plan', html`<span class="big">${summary.plan}</span> ${number(summary.rate_limit_per_minute)} requests per minute per key`],
    ['Monthly allowance', html`<span class="big">${number(summary.monthly_credits)}</span> credits`],
    ['Next top-up', html`<span class="big"><time datetime="${summary.next_topup_at}">${summary.next_topup_at.slice(0, 10)}</time></span> 00:00 UTC, to ${number(summary.monthly_credits)} credits`],
    ['Jobs now', html`<span class="big">${number(summary.running_jobs)}</span> running, ${number(summary.queued_jobs)} queued; the plan runs ${number(summary.max_running_jobs)} at once`],
  ];
  return html`<dl class="cards">${cards.map(([label, value]) => html`<div class="stat"><dt>${label}</dt><dd>${value}</dd></div>`)}</dl>`;
}

const KIND_LABELS: Record<string, string> = { grant: 'Monthly top-up', charge: 'Charge', refund: 'Refund', adjust: 'Adjustment' };

function ledgerTable(entries: CreditEntry[]): Html {
  return dataTable({
    caption: 'Credit ledger, newest first',
    columns: [
      { label: 'When', cell: (e: CreditEntry) => dateTime(e.createdAt) },
      { label: 'Kind', cell: (e) => KIND_LABELS[e.kind] ?? e.kind },
      { label: 'Credits', className: 'num', cell: (e) => html`<span class="${e.amount < 0 ? 'amount-out' : 'amount-in'}">${e.amount > 0 ? '+' : ''}${number(e.amount)}</span>` },
      { label: 'Job', cell: (e) => (e.jobId ? html`<a href="/dashboard/jobs/${e.jobId}"><code>${e.jobId.slice(0, 8)}</code></a>` : '—') },
      { label: 'Note', cell: (e) => e.note ?? '' },
    ],
    rows: entries,
    empty: 'No ledger entries yet.',
  });
}

export function creditsView(
  page: PageContext,
  data: { summary: AccountSummary; usage: { days: string[]; series: Series[] }; ledger: { items: CreditEntry[]; next_cursor: string | null }; cursor: string | undefined },
): Html {
  return html`${summaryCards(data.summary)}
<p class="lead">Unused allowance does not roll over; credits your operator adds above it are kept. A failed job is refunded once.</p>
<section aria-labelledby="usage-h"><h2 id="usage-h">Credits used per day, by job type</h2>
${stackedBars({ days: data.usage.days, series: data.usage.series, label: 'Credits used per day by job type, last 30 days', unit: 'credits' })}
</section>
<section aria-labelledby="ledger-h"><h2 id="ledger-h">Ledger</h2>
${ledgerTable(data.ledger.items)}
${pager({
  label: 'Ledger pages',
  firstHref: data.cursor ? '/dashboard/credits' : null,
  nextHref: data.ledger.next_cursor ? `/dashboard/credits${queryString({ cursor: data.ledger.next_cursor })}#ledger-h` : null,
})}
</section>`;
}

export function recentJobsTable(jobs: JobResource[]): Html {
  return dataTable({
    caption: 'Recent jobs',
    captionHidden: true,
    columns: [
      { label: 'Job', cell: (j: JobResource) => html`<a href="/dashboard/jobs/${j.job_id}">${j.job_type} <code>${j.job_id.slice(0, 8)}</code></a>` },
      { label: 'Status', cell: (j) => statusBadge(j.status) },
      { label: 'Created', cell: (j) => dateTime(j.created_at) },
      { label: 'Credits', className: 'num', cell: (j) => j.credits_charged },
    ],
    rows: jobs,
    empty: html`No jobs yet. <a href="/dashboard/jobs/new">Start one</a>.`,
  });
}

export function overviewView(page: PageContext, data: { summary: AccountSummary; recent: JobResource[]; keyCount: number }): Html {
  const usage = Object.entries(data.summary.usage_this_month).filter(([, v]) => v !== 0);
  return html`${summaryCards(data.summary)}
<div class="columns columns-main">
<section aria-labelledby="recent-h" class="card"><h2 id="recent-h">Recent jobs</h2>
${recentJobsTable(data.recent)}
<p><a href="/dashboard/jobs">All jobs</a> · <a href="/dashboard/jobs/new">New job</a></p>
</section>
<section aria-labelledby="month-h" class="card"><h2 id="month-h">This month</h2>
${usage.length
  ? html`<table class="data compact"><caption class="visually-hidden">Credits used this month by job type</caption><thead><tr><th scope="col">Job type</th><th scope="col" class="num">Credits</th></tr></thead>
<tbody>${usage.map(([type, v]) => html`<tr><th scope="row">${type}</th><td class="num">${v}</td></tr>`)}</tbody></table>`
  : html`<p class="empty">No credits used yet this month.</p>`}
<p>${data.keyCount} API key${data.keyCount === 1 ? '' : 's'} · <a href="/dashboard/keys">Manage keys</a> · <a href="/dashboard/credits">Ledger</a></p>
</section>
</div>`;
}
