// Strictly escaped HTML templates: every interpolated value is escaped unless it is already Html
// (built by this module), so a view cannot emit unescaped user data by accident.

/** A fragment of markup that is known to be safe. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What a template accepts: text (escaped), numbers, Html, lists of these; null/undefined/false render nothing. */
export type Renderable = Html | string | number | boolean | null | undefined | readonly Renderable[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(v: Renderable): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

/** Tagged template: `html\`<p>${text}</p>\`` escapes `text`. */
export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Markup produced by trusted code (never user data), e.g. generated SVG numbers. */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** An href for a URL that came from a user: http(s) or a same-site path, anything else becomes inert. */
export function safeHref(url: string): string {
  return /^(https?:\/\/|\/(?!\/))/i.test(url) ? url : '#';
}

/** A query string from defined values, e.g. `?status=failed&cursor=…`, or ''. */
export function queryString(params: Record<string, string | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}
