import { DomainError } from '../lib/errors';

interface Cursor {
  t: number;
  id: string;
}

/** Opaque keyset cursor over (created_at, id), newest first. */
export function encodeCursor(row: { createdAt: Date; id: string | number }): string {
  return Buffer.from(JSON.stringify({ t: row.createdAt.getTime(), id: String(row.id) } satisfies Cursor)).toString('base64url');
}

/** The `where` that continues after a cursor: pages stay consistent while rows are added or deleted. 422 on a bad cursor. */
export function afterCursor(raw: string): Record<string, unknown> {
  let c: Cursor | null = null;
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
    if (typeof parsed.t === 'number' && typeof parsed.id === 'string') c = parsed;
  } catch {
    // fall through
  }
  if (!c) throw DomainError.invalid('cursor is not valid: pass next_cursor from a previous response unchanged', [{ field: 'cursor', message: 'invalid cursor' }]);
  const t = new Date(c.t);
  return { $or: [{ createdAt: { $lt: t } }, { createdAt: t, id: { $lt: c.id } }] };
}

/** Splits a `limit + 1` query result into a page and its paging fields. */
export function page<T extends { createdAt: Date; id: string | number }>(rows: T[], limit: number): { items: T[]; next_cursor: string | null; has_more: boolean } {
  const items = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { items, next_cursor: hasMore && items.length ? encodeCursor(items[items.length - 1]!) : null, has_more: hasMore };
}
