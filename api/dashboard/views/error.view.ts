import { html, type Html } from '../html';
import type { PageContext } from './layout';

export const ERROR_TITLES: Record<number, string> = {
  400: 'Bad request',
  402: 'Not enough credits',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Too large',
  422: 'Check the form',
  429: 'Too many attempts',
  500: 'Something went wrong',
  503: 'Temporarily unavailable',
};

export function errorView(page: PageContext, message: string): Html {
  return html`<div class="card">
<p class="error-text" role="alert">${message}</p>
<p><a href="${page.account ? '/dashboard' : '/dashboard/sign-in'}">${page.account ? 'Back to the overview' : 'Go to sign-in'}</a></p>
</div>`;
}
