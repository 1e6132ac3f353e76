// The page frame (header, navigation, flash message, footer) and the small building blocks every view uses.
import type { Account } from '../../../accounts/entity';
import { html, type Html, type Renderable } from '../html';
import type { Flash } from '../session';

/** What every page needs to know about the request. */
export interface PageContext {
  account: Account | null;
  /** The session's CSRF token, for forms; null when there is no session. */
  csrfToken: string | null;
  path: string;
  flash: Flash | null;
}

const NAV = [
  { href: '/dashboard', label: 'Overview' },
  { href: '/dashboard/jobs', label: 'Jobs' },
  { href: '/dashboard/jobs/new', label: 'New job' },
  { href: '/dashboard/batches', label: 'Batches' },
  { href: '/dashboard/subscriptions', label: 'Subscriptions' },
  { href: '/dashboard/keys', label: 'API keys' },
  { href: '/dashboard/credits', label: 'Credits' },
  { href: '/dashboard/webhooks', label: 'Webhooks' },
  { href: '/dashboard/account', label: 'Account' },
];

/** The nav entry a path belongs to: the longest matching prefix. */
function currentNav(path: string): string | null {
  const hits = NAV.filter((n) => path === n.href || (n.href !== '/dashboard' && path.startsWith(`${n.href}/`)));
  if (path.startsWith('/dashboard/jobs/new')) return '/dashboard/jobs/new';
  return hits.sort((a, b) => b.href.length - a.href.length)[0]?.href ?? null;
}

export function csrfField(page: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${page.csrfToken ?? ''}">`;
}

export function layout(page: PageContext, title: string, body: Renderable, opts: { wide?: boolean } = {}): Html {
  const current = currentNav(page.path);
  const nav = page.account
    ? html`<nav aria-label="Main"><ul class="nav">${NAV.map(
        (n) => html`<li><a href="${n.href}"${n.href === current ? html` aria-current="page"` : ''}>${n.label}</a></li>`,
      )}</ul></nav>
      <form method="post" action="/dashboard/sign-out" class="sign-out">${csrfField(page)}<button type="submit" class="button-quiet">Sign out</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · mediasvc dashboard</title>
<link rel="icon" href="/dashboard/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <div class="header-inner">
    <a class="brand" href="/dashboard">mediasvc<span class="brand-sub">dashboard</span></a>
    ${page.account ? html`<span class="account-name">${page.account.name} · ${page.account.plan}</span>` : ''}
    ${nav}
  </div>
</header>
<main id="main" class="${opts.wide ? 'content content-wide' : 'content'}" tabindex="-1">
<h1>${title}</h1>
${page.flash?.kind === 'error' ? html`<div class="flash flash-error" role="alert">${page.flash.text}</div>` : page.flash ? html`<div class="flash" role="status">${page.flash.text}</div>` : ''}
${body}
</main>
<footer class="site-footer"><p>mediasvc · <a href="/v1/openapi.json">OpenAPI document</a></p></footer>
</body>
</html>`;
}

/** `2026-11-22 10:15 UTC` in a <time> element, or a dash. */
export function dateTime(value: Date | string | null | undefined): Html {
  if (!value) return html`<span aria-label="never">—</span>`;
  const d = typeof value === 'string' ? new Date(value) : value;
  const iso = d.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

export function statusBadge(status: string): Html {
  return html`<span class="badge badge-${status}">${status}</span>`;
}

export interface Column<T> {
  label: string;
  cell: (row: T) => Renderable;
  /** e.g. `num` right-aligns numbers. */
  className?: string;
}

/** A table that becomes one card per row at phone width (each cell labelled by its column). */
export function dataTable<T>(opts: { caption: string; captionHidden?: boolean; columns: Column<T>[]; rows: T[]; empty: Renderable }): Html {
  if (opts.rows.length === 0) return html`<p class="empty">${opts.empty}</p>`;
  return html`<table class="data responsive">
<caption${opts.captionHidden ? html` class="visually-hidden"` : ''}>${opts.caption}</caption>
<thead><tr>${opts.columns.map((c) => html`<th scope="col"${c.className ? html` class="${c.className}"` : ''}>${c.label}</th>`)}</tr></thead>
<tbody>${opts.rows.map(
    (row) => html`<tr>${opts.columns.map((c) => html`<td data-label="${c.label}"${c.className ? html` class="${c.className}"` : ''}><div class="cell">${c.cell(row)}</div></td>`)}</tr>`,
  )}</tbody>
</table>`;
}

/** A one-button form that POSTs to `action`. */
export function postButton(page: PageContext, action: string, label: string, opts: { variant?: 'danger' | 'quiet' | 'primary'; accessibleLabel?: string; hidden?: Record<string, string> } = {}): Html {
  const hidden = Object.entries(opts.hidden ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="post" action="${action}" class="inline-form">${csrfField(page)}${hidden}<button type="submit" class="button-${opts.variant ?? 'quiet'}"${
    opts.accessibleLabel ? html` aria-label="${opts.accessibleLabel}"` : ''
  }>${label}</button></form>`;
}

/** A value shown once (a new key or secret) with a copy button. */
export function secretOnce(opts: { testId: string; label: string; value: string; note: string }): Html {
  const id = `secret-${opts.testId}`;
  return html`<section class="secret-once" aria-labelledby="${id}-label">
<h2 id="${id}-label">${opts.label}</h2>
<p>${opts.note}</p>
<div class="copy-row"><code id="${id}" class="secret-value" data-testid="${opts.testId}">${opts.value}</code>
<button type="button" class="button-primary" data-copy-target="${id}">Copy</button></div>
<p class="copy-status" role="status" aria-live="polite"></p>
</section>`;
}

/** A labelled form control with optional help and error text wired up for assistive technology. */
export function field(opts: { id: string; label: Renderable; control: (describedBy: string, invalid: boolean) => Html; help?: Renderable; error?: string | null; required?: boolean }): Html {
  const helpId = `${opts.id}-help`;
  const errorId = `${opts.id}-error`;
  const describedBy = [opts.help ? helpId : '', opts.error ? errorId : ''].filter(Boolean).join(' ');
  return html`<div class="field${opts.error ? ' field-invalid' : ''}">
<label for="${opts.id}">${opts.label}${opts.required ? html` <span class="required">(required)</span>` : ''}</label>
${opts.control(describedBy, Boolean(opts.error))}
${opts.help ? html`<p class="help" id="${helpId}">${opts.help}</p>` : ''}
${opts.error ? html`<p class="error-text" id="${errorId}">${opts.error}</p>` : ''}
</div>`;
}

/** aria attributes for a control that `field` describes. */
export function describedAttrs(describedBy: string, invalid: boolean): Html {
  return html`${describedBy ? html` aria-describedby="${describedBy}"` : ''}${invalid ? html` aria-invalid="true"` : ''}`;
}

/** Links to the first and the next page of a keyset-paged list. */
export function pager(opts: { firstHref: string | null; nextHref: string | null; label: string }): Html {
  if (!opts.firstHref && !opts.nextHref) return html``;
  return html`<nav class="pager" aria-label="${opts.label}">
${opts.firstHref ? html`<a href="${opts.firstHref}">« Newest</a>` : ''}
${opts.nextHref ? html`<a href="${opts.nextHref}" rel="next">Older »</a>` : ''}
</nav>`;
}

export function errorSummary(message: string | null | undefined): Html {
  return message ? html`<div class="error-summary" role="alert"><p>${message}</p></div>` : html``;
}

/** A page that asks before something that cannot be undone: the action is a POST, Cancel goes back. */
export function confirmView(page: PageContext, opts: { message: Renderable; action: string; confirmLabel: string; cancelHref: string }): Html {
  return html`<div class="card confirm">
${opts.message}
<div class="button-row">
${postButton(page, opts.action, opts.confirmLabel, { variant: 'danger' })}
<a href="${opts.cancelHref}" class="button-secondary">Cancel</a>
</div>
</div>`;
}
