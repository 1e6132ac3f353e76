// Dashboard forms generated from the operation registry: each operation's request schema, as JSON
// Schema (z.toJSONSchema, input side), becomes a list of form fields; a posted form becomes the JSON
// body that REST would have received. A new registry entry gets its form with no dashboard change.
import { z } from 'zod';
import type { FieldError } from '../../lib/errors';
import type { JobType } from '../../jobs/types';
import { OPERATIONS, type AnyOperation } from '../../operations/registry';

type JsonSchema = {
  type?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  default?: unknown;
  description?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxItems?: number;
  maxLength?: number;
  $defs?: Record<string, JsonSchema>;
};

export type FieldKind = 'text' | 'url' | 'file' | 'time' | 'number' | 'integer' | 'select' | 'checkbox' | 'checkboxes';

export interface FormField {
  /** The request field's name. */
  name: string;
  /** The form control's name (variant fields are prefixed so each variant's values travel separately). */
  control: string;
  kind: FieldKind;
  required: boolean;
  /** null is allowed: an empty control leaves the field out, so its default (null) applies. */
  nullable: boolean;
  description?: string;
  default?: unknown;
  /** Choices of a select or a checkbox group; numeric when the schema's values are numbers. */
  options?: (string | number)[];
  min?: number;
  max?: number;
  /** The lower bound is excluded (e.g. a duration "more than 0"). */
  minExclusive?: boolean;
}

export interface OperationForm {
  jobType: JobType;
  title: string;
  summary: string;
  costText: string;
  /** Fields shown before the variant choice (required ones). */
  leading: FormField[];
  /** A discriminated union (e.g. preview_type): one fieldset of fields per value. */
  variants: { field: string; description?: string; options: { value: string; fields: FormField[] }[] } | null;
  /** Optional fields shown after the variant fieldsets. */
  trailing: FormField[];
}

function resolve(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let s = schema;
  while (s.$ref) {
    const name = s.$ref.replace('#/$defs/', '');
    s = { ...root.$defs?.[name], ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== '$ref')) };
  }
  return s;
}

/** The schema with `null` taken out of an anyOf, and whether it was there. */
function withoutNull(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const options = schema.anyOf;
  if (!options?.some((o) => o.type === 'null')) return { schema, nullable: false };
  const rest = options.filter((o) => o.type !== 'null');
  const { anyOf: _anyOf, ...outer } = schema;
  return { schema: rest.length === 1 ? { ...outer, ...rest[0] } : { ...outer, anyOf: rest }, nullable: true };
}

/** A form field for one property, or null for properties that do not apply (schema with no type: "ignored here"). */
function toField(name: string, raw: JsonSchema, required: boolean, root: JsonSchema, prefix: string): FormField | null {
  const { schema: s, nullable } = withoutNull(resolve(raw, root));
  const base = { name, control: prefix + name, required, nullable, description: raw.description ?? s.description, default: raw.default ?? s.default };
  const consts = s.anyOf?.map((o) => o.const).filter((c): c is string | number => typeof c === 'string' || typeof c === 'number');
  if (s.enum) return { ...base, kind: 'select', options: s.enum as (string | number)[] };
  if (consts?.length && consts.length === s.anyOf?.length) return { ...base, kind: 'select', options: consts };
  if (s.type === 'boolean') return { ...base, kind: 'checkbox' };
  if (s.type === 'array' && s.items?.enum) return { ...base, kind: 'checkboxes', options: s.items.enum as string[] };
  if (s.type === 'integer' || s.type === 'number') {
    const minExclusive = s.exclusiveMinimum !== undefined;
    return { ...base, kind: s.type, min: s.minimum ?? s.exclusiveMinimum, max: s.maximum, minExclusive };
  }
  if (s.anyOf?.some((o) => o.type === 'string') && s.anyOf.some((o) => o.type === 'number')) return { ...base, kind: 'time' };
  if (s.type === 'string') return { ...base, kind: s.format === 'uri' ? 'url' : 'text' };
  return null;
}

function fieldsOf(schema: JsonSchema, root: JsonSchema, prefix: string, skip: string[] = []): FormField[] {
  return Object.entries(schema.properties ?? {})
    .filter(([name]) => !skip.includes(name))
    .map(([name, prop]) => (name === 'upload_id' && prop.type === 'string' ? FILE_FIELD : toField(name, prop, schema.required?.includes(name) ?? false, root, prefix)))
    .filter((f): f is FormField => f !== null);
}

/** The variant key of a union member: the property every member pins to one constant. */
function discriminatorOf(members: JsonSchema[]): string | null {
  const first = members[0]?.properties ?? {};
  return Object.keys(first).find((k) => members.every((m) => m.properties?.[k]?.const !== undefined)) ?? null;
}

const sameField = (a: FormField, b: FormField) => JSON.stringify({ ...a, control: '' }) === JSON.stringify({ ...b, control: '' });

/**
 * `upload_id` on a form: a file from the person's computer, stored as an upload when the form is
 * posted (dashboard.ts), in place of the URL.
 */
const FILE_FIELD: FormField = { name: 'upload_id', control: 'file', kind: 'file', required: false, nullable: false, description: 'Or a file from your computer instead of a URL: audio or video, within your plan\'s size limit' };

/** The source (url, or a file) and the required fields first, the job's own webhook_url last. */
function ordered(fields: FormField[]): { leading: FormField[]; trailing: FormField[] } {
  const leads = (f: FormField) => f.required || f.name === 'url' || f.name === 'upload_id';
  const rank = (f: FormField) => (f.name === 'webhook_url' ? 4 : f.name === 'url' ? 0 : f.name === 'upload_id' ? 1 : leads(f) ? 2 : 3);
  const sorted = [...fields].sort((a, b) => rank(a) - rank(b));
  return { leading: sorted.filter(leads), trailing: sorted.filter((f) => !leads(f)) };
}

export function variantControl(variant: string, name: string): string {
  return `${variant}__${name}`;
}

/** The form of one operation, from its registry entry. */
export function operationForm(op: AnyOperation): OperationForm {
  const root = z.toJSONSchema(op.request, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const top = resolve(root, root);
  const head = { jobType: op.jobType, title: op.title, summary: op.summary, costText: op.costText };
  const members = (top.oneOf ?? top.anyOf)?.map((m) => resolve(m, root));
  const key = members ? discriminatorOf(members) : null;
  if (!members || !key) return { ...head, ...ordered(fieldsOf(top, root, '')), variants: null };

  const perVariant = members.map((m) => ({ value: String(m.properties![key]!.const), fields: fieldsOf(m, root, '', [key]) }));
  // Fields the same in every variant are asked once; the rest per variant, under prefixed control names.
  const common = perVariant[0]!.fields.filter((f) => perVariant.every((v) => v.fields.some((g) => sameField(f, g))));
  const isCommon = (f: FormField) => common.some((c) => c.name === f.name);
  return {
    ...head,
    ...ordered(common),
    variants: {
      field: key,
      description: members[0]!.properties![key]!.description,
      options: perVariant.map((v) => ({ value: v.value, fields: v.fields.filter((f) => !isCommon(f)).map((f) => ({ ...f, control: variantControl(v.value, f.name) })) })),
    },
  };
}

const FORMS = new Map<JobType, OperationForm>();
export function formFor(jobType: JobType): OperationForm {
  let form = FORMS.get(jobType);
  if (!form) FORMS.set(jobType, (form = operationForm(OPERATIONS[jobType])));
  return form;
}

/** Every field of the form that applies to the chosen variant. */
export function activeFields(form: OperationForm, variant: string | null): FormField[] {
  const chosen = form.variants?.options.find((o) => o.value === variant);
  return [...form.leading, ...(chosen?.fields ?? []), ...form.trailing];
}

/** Posted form values as strings: the last value of a repeated name, all values for checkbox groups. */
export type PostedForm = Record<string, unknown>;

function lastString(v: unknown): string {
  const last = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof last === 'string' ? last : '';
}

function valueOf(field: FormField, posted: PostedForm): unknown {
  const raw = posted[field.control];
  switch (field.kind) {
    case 'checkbox':
      // a hidden "false" precedes the checkbox, so the last value is the state
      return lastString(raw) === 'true';
    case 'file':
      // the posted file became an upload before the route ran (or the form kept an earlier one)
      return lastString(posted.upload_id) || undefined;
    case 'checkboxes': {
      const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((x): x is string => typeof x === 'string' && x !== '');
      return list.length ? list : undefined;
    }
    case 'number':
    case 'integer':
    case 'select': {
      const text = lastString(raw).trim();
      if (text === '') return undefined;
      const numeric = field.kind !== 'select' || typeof field.options?.[0] === 'number';
      // a non-number is passed on as typed, so validation names the field and its bounds
      return numeric && Number.isFinite(Number(text)) ? Number(text) : text;
    }
    default: {
      const text = lastString(raw).trim();
      return text === '' ? undefined : text;
    }
  }
}

/** The JSON request a posted form stands for; empty controls are left out so the schema's defaults apply. */
export function requestFromForm(form: OperationForm, posted: PostedForm): { body: Record<string, unknown>; variant: string | null } {
  const variant = form.variants ? lastString(posted[form.variants.field]) || null : null;
  const body: Record<string, unknown> = {};
  if (form.variants && variant) body[form.variants.field] = variant;
  for (const field of activeFields(form, variant)) {
    const v = valueOf(field, posted);
    if (v !== undefined) body[field.name] = v;
  }
  return { body, variant };
}

/** Validation errors keyed by form control, for showing each next to its field. */
export function errorsByControl(form: OperationForm, variant: string | null, errors: FieldError[]): Map<string, string> {
  const out = new Map<string, string>();
  const fields = activeFields(form, variant);
  for (const e of errors) {
    const name = e.field.split('.')[0] ?? '';
    const control = name === form.variants?.field ? name : fields.find((f) => f.name === name)?.control;
    if (control && !out.has(control)) out.set(control, e.message);
  }
  return out;
}
