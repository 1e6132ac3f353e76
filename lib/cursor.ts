// Opaque keyset cursors over (created_at, id), newest first. Signed, so a cursor the server did not
// issue (or one edited by hand) is a 422 before anything reaches the database.
import crypto from 'node:crypto';
import { DomainError } from './errors';

interface Cursor {
  t: number;
  id: string;
}

let key: Buffer = crypto.randomBytes(32);

/** Sets the signing key; every API process derives the same one from the shared server secret. */
export function useCursorKey(secret: Buffer): void {
  key = secret;
}

function mac(payload: string): string {
  return crypto.createHmac('sha256', key).update(payload).digest('base64url').slice(0, 22);
}

export function encodeCursor(row: { createdAt: Date; id: string | number }): string {
  const payload = Buffer.from(JSON.stringify({ t: row.createdAt.getTime(), id: String(row.id) } satisfies Cursor)).toString('base64url');
  return `${payload}.${mac(payload)}`;
}

const INVALID = 'cursor is not valid: pass next_cursor from a previous response unchanged';
const MAX_DATE_MS = 8.64e15;

/** The `where` that continues after a cursor: pages stay consistent while rows are added or deleted. 422 on a bad cursor. */
export function afterCursor(raw: string): Record<string, unknown> {
  const c = decode(raw);
  if (!c) throw DomainError.invalid(INVALID, [{ field: 'cursor', message: 'not a cursor this server issued' }]);
  const t = new Date(c.t);
  return { $or: [{ createdAt: { $lt: t } }, { createdAt: t, id: { $lt: c.id } }] };
}

function decode(raw: string): Cursor | null {
  const m = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{22})$/.exec(raw);
  if (!m) return null;
  const given = Buffer.from(m[2]!);
  const expected = Buffer.from(mac(m[1]!));
  if (!crypto.timingSafeEqual(given, expected)) return null;
  try {
    const c = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as Cursor;
    // signed, so well-formed; still checked, so nothing odd can reach a query
    if (!Number.isInteger(c.t) || c.t < 0 || c.t > MAX_DATE_MS) return null;
    if (typeof c.id !== 'string' || !/^([0-9a-f-]{36}|\d{1,15})$/.test(c.id)) return null;
    return c;
  } catch {
    return null;
  }
}

/** Splits a `limit + 1` query result into a page and its paging fields. */
export function page<T extends { createdAt: Date; id: string | number }>(rows: T[], limit: number): { items: T[]; next_cursor: string | null; has_more: boolean } {
  const items = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { items, next_cursor: hasMore && items.length ? encodeCursor(items[items.length - 1]!) : null, has_more: hasMore };
}

/** A cursor over positions (0, 1, 2…) rather than (created_at, id). */
export function encodePositionCursor(position: number): string {
  return encodeCursor({ createdAt: new Date(position), id: position });
}

/** The position a positions cursor continues after; 422 on a bad cursor. */
export function positionAfter(raw: string): number {
  const c = decode(raw);
  if (!c || c.id !== String(c.t)) throw DomainError.invalid(INVALID, [{ field: 'cursor', message: 'not a cursor this server issued' }]);
  return c.t;
}
