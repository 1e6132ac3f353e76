// Apertium (Debian's `apertium` plus language-pair packages): rule-based, fully offline.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runProcess } from '../child-process';
import type { LanguagePair, TranslationEngine } from './translation-engine';

/** Apertium's language codes → ISO 639-1 (Serbo-Croatian serves hr, sr and bs; Bokmål also `no`). */
const ISO: Record<string, string[]> = {
  af: ['af'], afr: ['af'], an: ['an'], arg: ['an'], ast: ['ast'], be: ['be'], bel: ['be'], bg: ['bg'], bul: ['bg'], br: ['br'], bre: ['br'],
  ca: ['ca'], cat: ['ca'], da: ['da'], dan: ['da'], en: ['en'], eng: ['en'], eo: ['eo'], epo: ['eo'], es: ['es'], spa: ['es'],
  eu: ['eu'], eus: ['eu'], fr: ['fr'], fra: ['fr'], gl: ['gl'], glg: ['gl'], hbs: ['hr', 'sr', 'bs'], hi: ['hi'], hin: ['hi'],
  id: ['id'], ind: ['id'], is: ['is'], isl: ['is'], it: ['it'], ita: ['it'], mk: ['mk'], mkd: ['mk'], ms: ['ms'], zlm: ['ms'],
  nl: ['nl'], nld: ['nl'], nn: ['nn'], nno: ['nn'], nb: ['nb', 'no'], nob: ['nb', 'no'], oc: ['oc'], oci: ['oc'], pt: ['pt'], por: ['pt'],
  ro: ['ro'], ron: ['ro'], ru: ['ru'], rus: ['ru'], sv: ['sv'], swe: ['sv'], uk: ['uk'], ukr: ['uk'], ur: ['ur'], urd: ['ur'],
  pl: ['pl'], pol: ['pl'], sl: ['sl'], slv: ['sl'],
};
/** Target variants that are a language of their own in ISO 639-1. */
const VARIANT_TARGETS: Record<string, string> = { hbs_HR: 'hr', hbs_SR: 'sr', hbs_BS: 'bs' };

export interface ApertiumOptions {
  binary: string;
  /** Where the pair packages put their .mode files. */
  modesDir: string;
}

interface Mode {
  pair: LanguagePair;
  mode: string;
}

/** Maps installed .mode files to directed ISO pairs (first mode wins for a pair; variants skipped). */
export function modesToPairs(files: string[]): Mode[] {
  const out: Mode[] = [];
  for (const f of [...files].sort()) {
    const m = /^([a-z]{2,3})-([a-z]{2,3}(?:_[A-Z]{2})?)\.mode$/.exec(f);
    if (!m) continue;
    const froms = ISO[m[1]!] ?? [];
    const tos = VARIANT_TARGETS[m[2]!] ? [VARIANT_TARGETS[m[2]!]!] : m[2]!.includes('_') ? [] : (ISO[m[2]!] ?? []);
    for (const from of froms) {
      for (const to of tos) {
        if (from === to || out.some((o) => o.pair.from === from && o.pair.to === to)) continue;
        out.push({ pair: { from, to }, mode: f.replace(/\.mode$/, '') });
      }
    }
  }
  return out;
}

export function createApertiumEngine(opts: ApertiumOptions): TranslationEngine {
  let cache: { at: number; modes: Mode[] } | null = null;
  const modes = (): Mode[] => {
    if (cache && Date.now() - cache.at < 30_000) return cache.modes;
    let files: string[] = [];
    try {
      files = fs.readdirSync(opts.modesDir);
    } catch {
      files = [];
    }
    cache = { at: Date.now(), modes: modesToPairs(files) };
    return cache.modes;
  };

  async function runMode(mode: string, input: string, signal?: AbortSignal): Promise<string> {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'apertium-'));
    try {
      const inFile = path.join(dir, 'in.txt');
      const outFile = path.join(dir, 'out.txt');
      await fsp.writeFile(inFile, input, 'utf8');
      // -u: no unknown-word marks; -f txt: plain text, newlines kept
      const res = await runProcess(opts.binary, { args: ['-d', path.dirname(opts.modesDir), '-u', '-f', 'txt', mode, inFile, outFile], signal });
      if (res.code !== 0) throw new Error(`apertium ${mode} failed (exit ${res.code}): ${res.stderr.trim().split('\n').slice(-2).join(' | ')}`);
      return await fsp.readFile(outFile, 'utf8');
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  return {
    name: 'apertium',
    pairs: () => modes().map((m) => m.pair),
    async translate(texts, pair, signal) {
      const mode = modes().find((m) => m.pair.from === pair.from && m.pair.to === pair.to);
      if (!mode) throw new Error(`Apertium has no installed pair ${pair.from}→${pair.to}`);
      if (texts.length === 0) return [];
      // One call for all texts, one per line; if the line structure does not survive, one call per text.
      const flat = texts.map((t) => t.replace(/\s*\n\s*/g, ' ').trim());
      const out = (await runMode(mode.mode, flat.join('\n') + '\n', signal)).replace(/\n$/, '').split('\n');
      if (out.length === texts.length) return out.map((t) => t.trim());
      const each: string[] = [];
      for (const t of flat) each.push(t ? (await runMode(mode.mode, `${t}\n`, signal)).trim() : '');
      return each;
    },
  };
}
