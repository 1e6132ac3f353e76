// Glue between routes and views: the page context, HTML responses, form fields and redirects.
import { DomainError } from '../../lib/errors';
import type { Html, Renderable } from './html';
import { flash, takeFlash, type DashboardContext, type Flash } from './session';
import { layout, type PageContext } from './views/layout';

export async function pageContext(ctx: DashboardContext): Promise<PageContext> {
  return { account: ctx.state.account ?? null, csrfToken: ctx.state.session?.csrfToken ?? null, path: ctx.path, flash: await takeFlash(ctx) };
}

export function sendHtml(ctx: DashboardContext, markup: Html, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = markup.value;
}

/** Renders a whole page: `body` gets the page context (for CSRF fields). */
export async function renderPage(ctx: DashboardContext, title: string, body: (page: PageContext) => Renderable, opts: { status?: number; wide?: boolean } = {}): Promise<void> {
  const page = await pageContext(ctx);
  sendHtml(ctx, layout(page, title, body(page), { wide: opts.wide }), opts.status);
}

/** The parsed urlencoded form (repeated names become arrays). */
export function formBody(ctx: DashboardContext): Record<string, unknown> {
  const body = (ctx.request as { body?: unknown }).body;
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/** One text field of the form ('' when absent; the last value when repeated). */
export function formString(ctx: DashboardContext, name: string): string {
  const v = formBody(ctx)[name];
  const last = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof last === 'string' ? last : '';
}

/** Every value of a repeated field (checkbox groups). */
export function formList(ctx: DashboardContext, name: string): string[] {
  const v = formBody(ctx)[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');
}

/** Post/Redirect/Get with a one-line message on the next page (an error shows red). */
export async function redirectWithFlash(ctx: DashboardContext, to: string, message: string, kind: Flash['kind'] = 'success'): Promise<void> {
  await flash(ctx, message, kind);
  ctx.status = 303;
  ctx.redirect(to);
}

/** A path inside the dashboard to return to after signing in; anything else becomes the overview. */
export function safeNext(raw: unknown): string {
  return typeof raw === 'string' && /^\/dashboard(\/[A-Za-z0-9/_?=&%.-]*)?$/.test(raw) && !raw.includes('//') ? raw : '/dashboard';
}

/** The message of a validation error, to show next to its form; anything else is rethrown. */
export function invalidDetail(err: unknown): string {
  if (err instanceof DomainError && err.kind === 'invalid') return err.detail;
  throw err;
}
