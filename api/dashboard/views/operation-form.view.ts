import { OPERATIONS } from '../../../operations/registry';
import { html, type Html } from '../html';
import { activeFields, type FormField, type OperationForm, type PostedForm } from '../operation-forms';
import { csrfField, describedAttrs, errorSummary, field, type PageContext } from './layout';

const ACRONYMS: Record<string, string> = { url: 'URL', fps: 'FPS' };

/** `clip_start` → `Clip start`, `webhook_url` → `Webhook URL`. */
function humanize(name: string): string {
  const words = name.split('_').map((w) => ACRONYMS[w] ?? w).join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function bounds(f: FormField): string {
  if (f.min === undefined && f.max === undefined) return '';
  const low = f.min === undefined ? '' : f.minExclusive ? `more than ${f.min}` : `at least ${f.min}`;
  const high = f.max === undefined ? '' : `at most ${f.max}`;
  const text = [low, high].filter(Boolean).join(', ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** The schema's description, then what it does not already say: the time format, the default, the bounds. */
function helpText(f: FormField): string {
  const said = (f.description ?? '').toLowerCase();
  const parts = [f.description ? `${f.description.replace(/\.$/, '')}.` : ''];
  if (f.kind === 'time' && !said.includes('hh:mm')) parts.push('HH:MM:SS, MM:SS or seconds.');
  if (f.default !== undefined && f.default !== null && f.kind !== 'checkbox' && !said.includes('default')) parts.push(`Default: ${Array.isArray(f.default) ? f.default.join(', ') : String(f.default)}.`);
  if (!said.includes('at most')) parts.push(bounds(f));
  return parts.filter(Boolean).join(' ');
}

/** The posted value(s) of a control, or its default on a fresh form. */
function current(f: FormField, posted: PostedForm | null): string[] {
  if (posted) {
    const v = posted[f.kind === 'file' ? 'upload_id' : f.control];
    return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');
  }
  if (f.default === undefined || f.default === null) return [];
  if (f.kind === 'checkbox') return [String(f.default)];
  return Array.isArray(f.default) ? f.default.map(String) : [String(f.default)];
}

function label(f: FormField): Html {
  if (f.kind === 'file') return html`File <code class="api-name">${f.name}</code>`;
  return html`${humanize(f.name)} <code class="api-name">${f.name}</code>`;
}

function control(f: FormField, values: string[], error: string | null): Html {
  const id = `f-${f.control}`;
  const help = helpText(f);
  if (f.kind === 'checkbox') {
    const checked = values[values.length - 1] === 'true';
    return html`<div class="field field-check${error ? ' field-invalid' : ''}">
<input type="hidden" name="${f.control}" value="false">
<input type="checkbox" id="${id}" name="${f.control}" value="true"${checked ? html` checked` : ''}${describedAttrs(help ? `${id}-help` : '', Boolean(error))}>
<label for="${id}">${label(f)}</label>
${help ? html`<p class="help" id="${id}-help">${help}</p>` : ''}
${error ? html`<p class="error-text">${error}</p>` : ''}
</div>`;
  }
  if (f.kind === 'checkboxes') {
    return html`<fieldset class="field checks${error ? ' field-invalid' : ''}"${help ? html` aria-describedby="${id}-help"` : ''}>
<legend>${label(f)}</legend>
${(f.options ?? []).map((o, i) => html`<div class="check"><input type="checkbox" id="${id}-${i}" name="${f.control}" value="${o}"${values.includes(String(o)) ? html` checked` : ''}><label for="${id}-${i}">${o}</label></div>`)}
${help ? html`<p class="help" id="${id}-help">${help}</p>` : ''}
${error ? html`<p class="error-text">${error}</p>` : ''}
</fieldset>`;
  }
  const value = values[values.length - 1] ?? '';
  return field({
    id,
    label: label(f),
    required: f.required,
    help: help || undefined,
    error,
    control: (d, invalid) => {
      const aria = describedAttrs(d, invalid);
      if (f.kind === 'select') {
        return html`<select id="${id}" name="${f.control}"${aria}>
${f.nullable || f.default === undefined ? html`<option value="">${f.nullable ? '(none: use the default)' : '(choose)'}</option>` : ''}
${(f.options ?? []).map((o) => html`<option value="${o}"${String(o) === value ? html` selected` : ''}>${o}</option>`)}
</select>`;
      }
      if (f.kind === 'number' || f.kind === 'integer') {
        return html`<input id="${id}" name="${f.control}" type="number" inputmode="${f.kind === 'integer' ? 'numeric' : 'decimal'}" step="${f.kind === 'integer' ? '1' : 'any'}"${
          f.min !== undefined ? html` min="${f.min}"` : ''
        }${f.max !== undefined ? html` max="${f.max}"` : ''} value="${value}"${f.required ? html` required` : ''}${aria}>`;
      }
      if (f.kind === 'file') {
        // a file sent with an earlier try of this form is kept, so a fix elsewhere needs no new upload
        return html`<input id="${id}" name="${f.control}" type="file" accept="audio/*,video/*"${aria}>${
          value ? html`<input type="hidden" name="upload_id" value="${value}"><span class="help">Kept: the file you sent (${value}); choose another to replace it.</span>` : ''
        }`;
      }
      const type = f.kind === 'url' ? 'url' : 'text';
      const placeholder = f.kind === 'time' ? '01:30' : f.kind === 'url' ? 'https://' : '';
      return html`<input id="${id}" name="${f.control}" type="${type}" value="${value}"${placeholder ? html` placeholder="${placeholder}"` : ''}${
        f.required ? html` required` : ''
      } autocomplete="off" spellcheck="false"${aria}>`;
    },
  });
}

export function operationFormView(page: PageContext, form: OperationForm, opts: { posted: PostedForm | null; errors: Map<string, string>; error: string | null }): Html {
  const render = (f: FormField) => control(f, current(f, opts.posted), opts.errors.get(f.control) ?? null);
  const v = form.variants;
  const chosen = v ? ((opts.posted?.[v.field] as string | undefined) ?? v.options[0]?.value ?? '') : null;
  const op = OPERATIONS[form.jobType];
  return html`<p class="lead">${form.summary}. Costs ${form.costText}; the same as <code>POST ${op.path}</code> with your API key.</p>
${errorSummary(opts.error)}
<form method="post" action="/dashboard/jobs/new/${form.jobType}" class="stack-form card op-form"${activeFields(form, null).some((f) => f.kind === 'file') ? html` enctype="multipart/form-data"` : ''} novalidate>
${csrfField(page)}
${form.leading.map(render)}
${v
  ? html`${field({
      id: `f-${v.field}`,
      label: html`${humanize(v.field)} <code class="api-name">${v.field}</code>`,
      required: true,
      error: opts.errors.get(v.field) ?? null,
      help: v.description,
      control: (d, invalid) => html`<select id="f-${v.field}" name="${v.field}" data-variant-switch${describedAttrs(d, invalid)}>
${v.options.map((o) => html`<option value="${o.value}"${o.value === chosen ? html` selected` : ''}>${o.value}</option>`)}</select>`,
    })}
${v.options.map(
  (o) => html`<fieldset class="variant" data-variant="${o.value}">
<legend>Options for ${v.field} <strong>${o.value}</strong></legend>
${o.fields.length ? o.fields.map(render) : html`<p class="help">No further options.</p>`}
</fieldset>`,
)}`
  : ''}
${form.trailing.map(render)}
<div class="button-row"><button type="submit" class="button-primary">Start ${form.title.toLowerCase()} job (${form.costText})</button>
<a href="/dashboard/jobs/new" class="button-secondary">Back</a></div>
</form>`;
}

export function operationListView(forms: OperationForm[]): Html {
  return html`<p class="lead">Try any operation without curl: each form is generated from the API's request schema, and a job started here is charged like one started through the API.</p>
<ul class="op-list">${forms.map(
    (f) => html`<li class="card"><h2><a href="/dashboard/jobs/new/${f.jobType}">${f.title}</a></h2><p>${f.summary}.</p><p class="cost">${f.costText} · <code>POST ${OPERATIONS[f.jobType].path}</code></p></li>`,
  )}</ul>`;
}
