import { html, type Html } from '../html';
import { csrfField, describedAttrs, errorSummary, field, type PageContext } from './layout';

export interface SignInViewData {
  email: string;
  next: string;
  error?: string | null;
  notice?: string | null;
}

export function signInView(page: PageContext, data: SignInViewData): Html {
  return html`<div class="auth card">
${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
${errorSummary(data.error)}
<form method="post" action="/dashboard/sign-in" class="stack-form">
${csrfField(page)}
<input type="hidden" name="next" value="${data.next}">
${field({
  id: 'email',
  label: 'Email',
  control: (d, invalid) => html`<input id="email" name="email" type="email" autocomplete="username" required value="${data.email}"${describedAttrs(d, invalid)}>`,
})}
${field({
  id: 'password',
  label: 'Password',
  control: (d, invalid) => html`<input id="password" name="password" type="password" autocomplete="current-password" required${describedAttrs(d, invalid)}>`,
})}
<button type="submit" class="button-primary">Sign in</button>
</form>
<p class="help">No password yet? Ask your operator for a one-time sign-in link
(<code>bin/mediasvc accounts login-link ACCOUNT</code>), then set a password under Account.</p>
</div>`;
}

/** The page a sign-in link opens: one button, so link scanners that fetch the URL do not use it up. */
export function loginLinkView(page: PageContext, token: string): Html {
  return html`<div class="auth card">
<p>This one-time link signs you in to the dashboard. It works once and expires 15 minutes after it was made.</p>
<form method="post" action="/dashboard/login" class="stack-form">
${csrfField(page)}
<input type="hidden" name="token" value="${token}">
<button type="submit" class="button-primary" autofocus>Sign in</button>
</form>
</div>`;
}

export function loginLinkFailedView(message: string): Html {
  return html`<div class="auth card">
${errorSummary(message)}
<p><a href="/dashboard/sign-in">Sign in with email and password</a> instead.</p>
</div>`;
}
