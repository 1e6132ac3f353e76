// Which of a source's items a batch takes: the date bounds, the order, the count. Pure.
import type { CollectionItem } from '../engines/collections/collection';
import type { BatchSelection } from './types';

/**
 * The items inside `after`/`before` (an item without a date is outside any bound), newest or oldest
 * first by date (undated items keep the source's order, after the dated ones), without repeats of one
 * identity, at most `maxItems`. `note` says what a limit left out.
 */
export function selectItems(listed: CollectionItem[], selection: BatchSelection, sourceNote: string | null): { items: CollectionItem[]; note: string | null } {
  const after = selection.after ? Date.parse(selection.after) : null;
  const before = selection.before ? Date.parse(selection.before) : null;
  const seen = new Set<string>();
  const inRange = listed.filter((item) => {
    if (seen.has(item.identity)) return false;
    seen.add(item.identity);
    if (after === null && before === null) return true;
    const t = item.publishedAt ? Date.parse(item.publishedAt) : NaN;
    if (!Number.isFinite(t)) return false;
    return (after === null || t > after) && (before === null || t < before);
  });
  const sign = selection.order === 'oldest' ? 1 : -1;
  const dated = inRange.map((item, i) => ({ item, i, t: item.publishedAt ? Date.parse(item.publishedAt) : NaN }));
  dated.sort((a, b) => {
    const ad = Number.isFinite(a.t);
    const bd = Number.isFinite(b.t);
    if (ad && bd && a.t !== b.t) return sign * (a.t - b.t);
    if (ad !== bd) return ad ? -1 : 1;
    return a.i - b.i;
  });
  const ordered = dated.map((d) => d.item);
  if (ordered.length <= selection.maxItems) return { items: ordered, note: sourceNote };
  const cut = `${ordered.length} items matched; the first ${selection.maxItems} were taken (max_items, or the plan's limit on one batch)`;
  return { items: ordered.slice(0, selection.maxItems), note: sourceNote ? `${sourceNote}; ${cut}` : cut };
}
