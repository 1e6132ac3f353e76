import type { ApiKey } from './entity';
import { html, type Html } from '../api/dashboard/html';
import type { KeyWithUsage } from './service';
import { sparkline } from '../api/dashboard/views/charts';
import { confirmView, csrfField, dataTable, dateTime, describedAttrs, errorSummary, field, postButton, secretOnce, type PageContext } from '../api/dashboard/views/layout';

export interface KeysViewData {
  days: string[];
  keys: KeyWithUsage[];
  /** The full value of a key just created: shown here once. */
  created?: { key: string; record: ApiKey };
  error?: string | null;
  nameValue?: string;
}

function createForm(page: PageContext, data: KeysViewData): Html {
  return html`<form method="post" action="/dashboard/keys" class="stack-form card">
<h2>Create a key</h2>
${csrfField(page)}
${field({
  id: 'key-name',
  label: 'Key name',
  help: 'Where the key is used, e.g. "laptop" or "production worker".',
  error: data.error,
  control: (d, invalid) => html`<input id="key-name" name="name" type="text" maxlength="100" required autocomplete="off" value="${data.nameValue ?? ''}"${describedAttrs(d, invalid)}>`,
})}
<button type="submit" class="button-primary">Create key</button>
</form>`;
}

function actions(page: PageContext, key: ApiKey): Html {
  const base = `/dashboard/keys/${key.id}`;
  return html`<div class="row-actions">
<details class="inline-details"><summary>Rename<span class="visually-hidden"> ${key.name}</span></summary>
<form method="post" action="${base}/rename" class="inline-edit">${csrfField(page)}
<label for="rename-${key.id}" class="visually-hidden">New name for ${key.name}</label>
<input id="rename-${key.id}" name="name" type="text" maxlength="100" required value="${key.name}">
<button type="submit" class="button-quiet">Save</button></form></details>
${key.isActive
  ? postButton(page, `${base}/deactivate`, 'Deactivate', { accessibleLabel: `Deactivate ${key.name}` })
  : postButton(page, `${base}/activate`, 'Reactivate', { accessibleLabel: `Reactivate ${key.name}` })}
<a class="button-danger-link" href="${base}/delete" aria-label="Delete ${key.name}">Delete</a>
</div>`;
}

export function keysView(page: PageContext, data: KeysViewData): Html {
  return html`
${data.created
  ? secretOnce({
      testId: 'new-key',
      label: `New key "${data.created.record.name}"`,
      value: data.created.key,
      note: 'Copy it now: this is the only time the full key is shown. Only its first 8 characters are stored in readable form.',
    })
  : ''}
<p class="lead">Send a key as <code>Authorization: Bearer vc_…</code>. Requests with a deactivated key get 403; its history stays.</p>
${errorSummary(data.error)}
${dataTable({
  caption: 'Your API keys',
  columns: [
    { label: 'Name', cell: (k: KeyWithUsage) => html`<strong>${k.key.name}</strong>` },
    { label: 'Key', cell: (k) => html`<code>${k.key.prefix}…</code>` },
    { label: 'Status', cell: (k) => html`<span class="badge ${k.key.isActive ? 'badge-completed' : 'badge-inactive'}">${k.key.isActive ? 'active' : 'inactive'}</span>` },
    { label: 'Created', cell: (k) => dateTime(k.key.createdAt) },
    { label: 'Last used', cell: (k) => dateTime(k.key.lastUsedAt) },
    {
      label: 'Requests, 30 days',
      cell: (k) => html`<span class="usage">${sparkline({ days: data.days, values: k.usage, label: `Requests per day with ${k.key.name}`, unit: 'requests' })}<span class="usage-total">${k.usage.reduce((a, b) => a + b, 0)}</span></span>`,
    },
    { label: 'Actions', cell: (k) => actions(page, k.key) },
  ],
  rows: data.keys,
  empty: 'No keys yet. Create one below to call the API.',
})}
${createForm(page, data)}`;
}

export function deleteKeyView(page: PageContext, key: ApiKey): Html {
  return confirmView(page, {
    message: html`<p>Delete the key <strong>${key.name}</strong> (<code>${key.prefix}…</code>)? Requests with it will get 401 and its usage history is removed. This cannot be undone.</p>
<p>To stop it for a while instead, deactivate it: that keeps its history.</p>`,
    action: `/dashboard/keys/${key.id}/delete`,
    confirmLabel: 'Delete key',
    cancelHref: '/dashboard/keys',
  });
}
