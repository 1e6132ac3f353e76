import type { Account } from './entity';
import type { AccountOwner } from './owner.entity';
import { html, type Html } from '../api/dashboard/html';
import { PASSWORD_MIN_LENGTH } from '../api/dashboard/passwords';
import { csrfField, dateTime, describedAttrs, errorSummary, field, type PageContext } from '../api/dashboard/views/layout';

export function accountView(page: PageContext, data: { account: Account; owner: AccountOwner | null; error?: string | null; errors?: Map<string, string> }): Html {
  const hasPassword = Boolean(data.owner?.passwordHash);
  const err = (name: string) => data.errors?.get(name) ?? null;
  const passwordInput = (id: string, name: string, autocomplete: string) => (d: string, invalid: boolean) =>
    html`<input id="${id}" name="${name}" type="password" autocomplete="${autocomplete}" required${describedAttrs(d, invalid)}>`;
  return html`<dl class="facts">
<div><dt>Account</dt><dd>${data.account.name}</dd></div>
<div><dt>Plan</dt><dd>${data.account.plan}</dd></div>
<div class="wide"><dt>Account id</dt><dd><code class="break">${data.account.id}</code></dd></div>
<div class="wide"><dt>Owner email</dt><dd>${data.owner?.email ?? html`<span class="empty">none: your operator sets it with <code>bin/mediasvc accounts owner ACCOUNT --email …</code></span>`}</dd></div>
</dl>
<form method="post" action="/dashboard/account/password" class="stack-form card">
<h2>${hasPassword ? 'Change your password' : 'Set a password'}</h2>
<p class="help">${hasPassword ? html`Last changed ${dateTime(data.owner?.passwordChangedAt ?? null)}.` : ''} With a password you sign in with ${data.owner?.email ?? 'your owner email'} instead of a one-time link.</p>
${csrfField(page)}
${errorSummary(data.error)}
<input type="text" name="username" autocomplete="username" value="${data.owner?.email ?? ''}" hidden>
${hasPassword ? field({ id: 'current-password', label: 'Current password', error: err('current_password'), control: passwordInput('current-password', 'current_password', 'current-password') }) : ''}
${field({ id: 'new-password', label: 'New password', help: `At least ${PASSWORD_MIN_LENGTH} characters; a few unrelated words make a strong one.`, error: err('new_password'), control: passwordInput('new-password', 'new_password', 'new-password') })}
${field({ id: 'confirm-password', label: 'New password again', error: err('confirm_password'), control: passwordInput('confirm-password', 'confirm_password', 'new-password') })}
<button type="submit" class="button-primary">${hasPassword ? 'Change password' : 'Set password'}</button>
</form>`;
}
