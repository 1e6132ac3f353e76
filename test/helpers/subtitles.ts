// Strict SRT and WebVTT parsers for tests: any deviation from the layout throws.

export interface ParsedCue {
  index?: number;
  start: number;
  end: number;
  text: string;
}

function seconds(h: string, m: string, s: string, ms: string): number {
  return Number(h) * 3600 + Number(m) * 60 + Number(s) + Number(ms) / 1000;
}

/** Numbered cues: `N`, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, one or more text lines, a blank line. */
export function parseSrtStrict(body: string): ParsedCue[] {
  if (body.includes('\r')) throw new Error('SRT: CR characters');
  const blocks = body.replace(/\n$/, '').split('\n\n');
  return blocks.map((block, i) => {
    const lines = block.split('\n');
    if (lines.length < 3) throw new Error(`SRT cue ${i + 1}: expected index, timing and text, got ${JSON.stringify(block)}`);
    if (lines[0] !== String(i + 1)) throw new Error(`SRT cue ${i + 1}: index line is ${JSON.stringify(lines[0])}`);
    const m = /^(\d{2}):([0-5]\d):([0-5]\d),(\d{3}) --> (\d{2}):([0-5]\d):([0-5]\d),(\d{3})$/.exec(lines[1]!);
    if (!m) throw new Error(`SRT cue ${i + 1}: bad timing line ${JSON.stringify(lines[1])}`);
    const text = lines.slice(2);
    if (text.some((l) => l.trim() === '')) throw new Error(`SRT cue ${i + 1}: empty text line`);
    return { index: i + 1, start: seconds(m[1]!, m[2]!, m[3]!, m[4]!), end: seconds(m[5]!, m[6]!, m[7]!, m[8]!), text: text.join('\n') };
  });
}

/** `WEBVTT` header line, a blank line, then cues `HH:MM:SS.mmm --> HH:MM:SS.mmm` + text, blank-separated. */
export function parseVttStrict(body: string): ParsedCue[] {
  if (body.includes('\r')) throw new Error('VTT: CR characters');
  if (!body.startsWith('WEBVTT\n\n')) throw new Error(`VTT: missing "WEBVTT" header, starts ${JSON.stringify(body.slice(0, 20))}`);
  const blocks = body.slice('WEBVTT\n\n'.length).replace(/\n$/, '').split('\n\n');
  return blocks.map((block, i) => {
    const lines = block.split('\n');
    const m = /^(\d{2}):([0-5]\d):([0-5]\d)\.(\d{3}) --> (\d{2}):([0-5]\d):([0-5]\d)\.(\d{3})$/.exec(lines[0]!);
    if (!m) throw new Error(`VTT cue ${i + 1}: bad timing line ${JSON.stringify(lines[0])}`);
    const text = lines.slice(1);
    if (text.length === 0 || text.some((l) => l.trim() === '')) throw new Error(`VTT cue ${i + 1}: missing text`);
    return { start: seconds(m[1]!, m[2]!, m[3]!, m[4]!), end: seconds(m[5]!, m[6]!, m[7]!, m[8]!), text: text.join('\n') };
  });
}

/** Throws unless every cue ends after it starts and cues start in non-decreasing order without overlap. */
export function assertMonotonic(cues: ParsedCue[]): void {
  if (cues.length === 0) throw new Error('no cues');
  cues.forEach((c, i) => {
    if (!(c.end > c.start)) throw new Error(`cue ${i + 1} ends (${c.end}) before it starts (${c.start})`);
    const prev = cues[i - 1];
    if (prev && c.start < prev.end) throw new Error(`cue ${i + 1} starts (${c.start}) before cue ${i} ends (${prev.end})`);
  });
}

/** Lower case, punctuation removed, whitespace collapsed. */
export function normaliseText(s: string): string[] {
  return s
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}\s']/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** Word error rate: word-level edit distance / reference length. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const r = normaliseText(reference);
  const h = normaliseText(hypothesis);
  const d = Array.from({ length: r.length + 1 }, (_, i) => [i, ...Array<number>(h.length).fill(0)]);
  for (let j = 1; j <= h.length; j++) d[0]![j] = j;
  for (let i = 1; i <= r.length; i++) {
    for (let j = 1; j <= h.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1));
    }
  }
  return d[r.length]![h.length]! / Math.max(1, r.length);
}
