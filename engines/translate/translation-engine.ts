// Text translation behind a small interface, so another engine (a neural one such as Argos
// Translate or OPUS-MT, once weights can be installed) can sit beside Apertium.

/** A directed pair of ISO 639-1 codes the engine translates directly. */
export interface LanguagePair {
  from: string;
  to: string;
}

export interface TranslationEngine {
  readonly name: string;
  /** Directed pairs this engine translates directly (installed ones only). */
  pairs(): LanguagePair[];
  /** Translates each text of a direct pair; the answer has one text per input text, in order. */
  translate(texts: string[], pair: LanguagePair, signal?: AbortSignal): Promise<string[]>;
}

/**
 * The languages to pass through, from → … → to: a direct pair if there is one, else through
 * English (source → en → target), else the shortest path through the pairs; null when none exists.
 */
export function planRoute(pairs: LanguagePair[], from: string, to: string): string[] | null {
  if (from === to) return [from];
  const has = (a: string, b: string) => pairs.some((p) => p.from === a && p.to === b);
  if (has(from, to)) return [from, to];
  if (from !== 'en' && to !== 'en' && has(from, 'en') && has('en', to)) return [from, 'en', to];
  // breadth-first: fewest hops; neighbours in sorted order so the route is stable
  const prev = new Map<string, string>([[from, '']]);
  let frontier = [from];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const lang of frontier) {
      for (const p of pairs.filter((q) => q.from === lang).sort((a, b) => a.to.localeCompare(b.to))) {
        if (prev.has(p.to)) continue;
        prev.set(p.to, lang);
        if (p.to === to) {
          const route = [to];
          for (let cur = lang; cur !== ''; cur = prev.get(cur)!) route.unshift(cur);
          return route;
        }
        next.push(p.to);
      }
    }
    frontier = next;
  }
  return null;
}

/** Every directed pair (from ≠ to) with some route, direct or pivoted. */
export function reachablePairs(pairs: LanguagePair[]): LanguagePair[] {
  const langs = [...new Set(pairs.flatMap((p) => [p.from, p.to]))].sort();
  const out: LanguagePair[] = [];
  for (const from of langs) for (const to of langs) if (from !== to && planRoute(pairs, from, to)) out.push({ from, to });
  return out;
}

/** Translates along a planned route, one engine call per hop. */
export async function translateRoute(engine: TranslationEngine, texts: string[], route: string[], signal?: AbortSignal): Promise<string[]> {
  let cur = texts;
  for (let i = 0; i + 1 < route.length; i++) cur = await engine.translate(cur, { from: route[i]!, to: route[i + 1]! }, signal);
  return cur;
}
