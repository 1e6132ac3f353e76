// Input validation with zod, for every entry point: a failure is a 422 DomainError naming each field.
import type { z } from 'zod';
import { DomainError, type FieldError } from './errors';

/** Validates input against a zod schema; a 422 DomainError with a field list and a readable detail on failure. */
export function parseInput<S extends z.ZodType>(schema: S, data: unknown): z.output<S> {
  const res = schema.safeParse(data);
  if (res.success) return res.data;
  const errors: FieldError[] = res.error.issues.flatMap((i) => {
    const at = i.path.map(String).join('.');
    // strict schemas: one error per unknown field, named, so a typo is obvious
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => ({ field: at ? `${at}.${k}` : k, message: 'is not a parameter of this call' }));
    return [{ field: at || '(body)', message: i.message }];
  });
  // a message that is already a sentence about its field ("clip_end must be after clip_start") stands alone
  const detail = errors.map((e) => (e.field === '(body)' || e.message.startsWith(`${e.field} `) ? e.message : `${e.field}: ${e.message}`)).join('; ');
  throw DomainError.invalid(detail, errors);
}
