import type { WebhookEndpoint } from './entity';
import { WEBHOOK_EVENTS } from './events';
import type { presentDelivery } from './service';
import { html, queryString, type Html } from '../api/dashboard/html';
import { confirmView, csrfField, dataTable, dateTime, describedAttrs, errorSummary, field, pager, postButton, secretOnce, statusBadge, type PageContext } from '../api/dashboard/views/layout';

type Delivery = ReturnType<typeof presentDelivery>;

export interface EndpointFormValues {
  url: string;
  events: string[];
  isActive: boolean;
}

function eventsLabel(events: readonly string[]): string {
  return events.length ? events.join(', ') : 'all events';
}

function endpointFields(idPrefix: string, values: EndpointFormValues, error: string | null, withActive: boolean): Html {
  return html`${field({
    id: `${idPrefix}-url`,
    label: 'URL',
    help: 'http or https on a public host; it receives a signed POST for each event.',
    error,
    control: (d, invalid) => html`<input id="${idPrefix}-url" name="url" type="url" required value="${values.url}" placeholder="https://example.com/hooks/media" autocomplete="off" spellcheck="false"${describedAttrs(d, invalid)}>`,
  })}
<fieldset class="field checks"><legend>Events</legend>
${WEBHOOK_EVENTS.map((e, i) => html`<div class="check"><input type="checkbox" id="${idPrefix}-ev-${i}" name="events" value="${e}"${values.events.includes(e) ? html` checked` : ''}><label for="${idPrefix}-ev-${i}">${e}</label></div>`)}
<p class="help">None ticked means every event.</p></fieldset>
${withActive
  ? html`<div class="field field-check"><input type="hidden" name="is_active" value="false"><input type="checkbox" id="${idPrefix}-active" name="is_active" value="true"${values.isActive ? html` checked` : ''}><label for="${idPrefix}-active">Active (inactive endpoints receive nothing)</label></div>`
  : ''}`;
}

export interface WebhooksViewData {
  endpoints: WebhookEndpoint[];
  created?: WebhookEndpoint;
  accountSecret?: { value: string; rotated: boolean };
  form: EndpointFormValues;
  error?: string | null;
  maxEndpoints: number;
}

export function webhooksView(page: PageContext, data: WebhooksViewData): Html {
  return html`${data.created
  ? secretOnce({
      testId: 'new-webhook-secret',
      label: 'Signing secret of the new endpoint',
      value: data.created.secret,
      note: 'Copy it now: it is shown only this once. Verify X-Service-Signature (or webhook-signature) with it.',
    })
  : ''}
${data.accountSecret
  ? secretOnce({
      testId: 'account-webhook-secret',
      label: data.accountSecret.rotated ? 'New per-job webhook secret' : 'Per-job webhook secret',
      value: data.accountSecret.value,
      note: data.accountSecret.rotated ? 'The old secret no longer signs anything. Update your receivers.' : 'It signs deliveries to the webhook_url you pass on a job.',
    })
  : ''}
<p class="lead">Endpoints receive <code>job.completed</code> and <code>job.failed</code> as signed POSTs, retried after 1, 5 and 30 minutes. At most ${data.maxEndpoints} per account; webhook calls are free.</p>
${dataTable({
  caption: 'Webhook endpoints',
  columns: [
    { label: 'URL', cell: (e: WebhookEndpoint) => html`<a href="/dashboard/webhooks/${e.id}" class="break">${e.url}</a>` },
    { label: 'Events', cell: (e) => eventsLabel(e.events) },
    { label: 'Status', cell: (e) => html`<span class="badge ${e.isActive ? 'badge-completed' : 'badge-inactive'}">${e.isActive ? 'active' : 'inactive'}</span>` },
    { label: 'Created', cell: (e) => dateTime(e.createdAt) },
    { label: 'Actions', cell: (e) => html`<a href="/dashboard/webhooks/${e.id}" aria-label="Manage ${e.url}">Edit, test, log</a>` },
  ],
  rows: data.endpoints,
  empty: 'No endpoints yet.',
})}
<form method="post" action="/dashboard/webhooks" class="stack-form card">
<h2>Add an endpoint</h2>
${csrfField(page)}
${errorSummary(data.error)}
${endpointFields('new', data.form, data.error ?? null, false)}
<button type="submit" class="button-primary">Add endpoint</button>
</form>
<section class="card" aria-labelledby="account-secret-h">
<h2 id="account-secret-h">Per-job webhook secret</h2>
<p>Deliveries to a job's own <code>webhook_url</code> are signed with this account-wide secret.</p>
<div class="button-row">
${postButton(page, '/dashboard/webhooks/secret/reveal', 'Reveal secret', { variant: 'primary' })}
<a href="/dashboard/webhooks/secret/rotate" class="button-danger-link">Rotate secret</a>
</div>
</section>`;
}

export function rotateSecretView(page: PageContext): Html {
  return confirmView(page, {
    message: html`<p>Replace the per-job webhook secret? Deliveries are signed with the new secret at once; receivers that check the old one will reject them until you update them.</p>`,
    action: '/dashboard/webhooks/secret/rotate',
    confirmLabel: 'Rotate secret',
    cancelHref: '/dashboard/webhooks',
  });
}

function deliveryTable(deliveries: Delivery[]): Html {
  return dataTable({
    caption: 'Delivery log, newest first',
    captionHidden: true,
    columns: [
      { label: 'When', cell: (d: Delivery) => dateTime(d.created_at) },
      { label: 'Event', cell: (d) => d.event },
      { label: 'Attempt', className: 'num', cell: (d) => d.attempt },
      { label: 'Result', cell: (d) => statusBadge(d.status) },
      { label: 'Status code', className: 'num', cell: (d) => html`<span data-testid="delivery-status-code">${d.status_code ?? '—'}</span>` },
      { label: 'Time', className: 'num', cell: (d) => (d.response_time_ms === null ? '—' : `${d.response_time_ms} ms`) },
      { label: 'Error', cell: (d) => d.error ?? '' },
      { label: 'Next attempt', cell: (d) => dateTime(d.next_attempt_at) },
    ],
    rows: deliveries,
    empty: 'No deliveries yet. Send a test delivery to check the endpoint.',
  });
}

export function webhookView(page: PageContext, data: { endpoint: WebhookEndpoint; form: EndpointFormValues; error?: string | null; log: { items: Delivery[]; next_cursor: string | null }; cursor?: string }): Html {
  const e = data.endpoint;
  const base = `/dashboard/webhooks/${e.id}`;
  return html`<div class="columns">
<form method="post" action="${base}" class="stack-form card">
<h2>Settings</h2>
${csrfField(page)}
${errorSummary(data.error)}
${endpointFields('edit', data.form, data.error ?? null, true)}
<button type="submit" class="button-primary">Save changes</button>
</form>
<section class="card" aria-labelledby="actions-h"><h2 id="actions-h">Actions</h2>
<p>A test sends a signed, synthetic <code>job.completed</code> now and logs it like a real one.</p>
<div class="button-row">
${postButton(page, `${base}/test`, 'Send test delivery', { variant: 'primary' })}
<a href="${base}/delete" class="button-danger-link">Delete endpoint</a>
</div>
<p>Created ${dateTime(e.createdAt)}.</p>
</section>
</div>
<section aria-labelledby="log-h"><h2 id="log-h">Delivery log</h2>
${deliveryTable(data.log.items)}
${pager({
  label: 'Delivery log pages',
  firstHref: data.cursor ? `${base}#log-h` : null,
  nextHref: data.log.next_cursor ? `${base}${queryString({ cursor: data.log.next_cursor })}#log-h` : null,
})}
</section>
<p><a href="/dashboard/webhooks">All endpoints</a></p>`;
}

export function deleteWebhookView(page: PageContext, endpoint: WebhookEndpoint): Html {
  return confirmView(page, {
    message: html`<p>Delete the endpoint <strong class="break">${endpoint.url}</strong>? It receives nothing more, and retries still due are dropped. This cannot be undone.</p>`,
    action: `/dashboard/webhooks/${endpoint.id}/delete`,
    confirmLabel: 'Delete endpoint',
    cancelHref: `/dashboard/webhooks/${endpoint.id}`,
  });
}
