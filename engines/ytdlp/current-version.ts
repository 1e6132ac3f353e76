// Which yt-dlp every new run uses: the version `mediasvc tools yt-dlp update` made current (state.json
// under YTDLP_TOOLS_DIR, replaced in one rename), else the one YTDLP_PATH names. Read as each run starts.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../lib/config';

export interface ToolsState {
  current: string | null;
  /** Earlier versions, newest first (the first is what rollback returns to). */
  previous: string[];
  updated_at: string | null;
}

export const VERSION = /^\d{4}\.\d{1,2}\.\d{1,2}(\.\d+)?$/;

function stateFile(c: Pick<Config, 'ytdlpToolsDir'>): string {
  return path.join(c.ytdlpToolsDir, 'state.json');
}

export function readState(c: Pick<Config, 'ytdlpToolsDir'>): ToolsState {
  try {
    return JSON.parse(fs.readFileSync(stateFile(c), 'utf8')) as ToolsState;
  } catch {
    return { current: null, previous: [], updated_at: null };
  }
}

export function writeState(c: Pick<Config, 'ytdlpToolsDir'>, s: ToolsState): void {
  fs.mkdirSync(c.ytdlpToolsDir, { recursive: true });
  const tmp = `${stateFile(c)}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(s, null, 2));
  fs.renameSync(tmp, stateFile(c)); // the switch: one rename, seen whole by the next run
}

export function wrapperOf(c: Pick<Config, 'ytdlpToolsDir'>, version: string): string {
  return path.join(c.ytdlpToolsDir, version, 'yt-dlp');
}

const bundledVersion = new Map<string, string>();

/** The version of the yt-dlp that YTDLP_PATH names (the pinned one in .venv), read from its package. */
function versionOfBundled(binary: string): string {
  let v = bundledVersion.get(binary);
  if (v === undefined) {
    v = 'unknown';
    const lib = path.join(path.dirname(path.dirname(binary)), 'lib');
    try {
      for (const py of fs.readdirSync(lib)) {
        const file = path.join(lib, py, 'site-packages', 'yt_dlp', 'version.py');
        const m = fs.existsSync(file) ? /__version__\s*=\s*'([^']+)'/.exec(fs.readFileSync(file, 'utf8')) : null;
        if (m) v = m[1]!;
      }
    } catch {
      // not a virtualenv layout: the version stays unknown
    }
    bundledVersion.set(binary, v);
  }
  return v;
}

/** The yt-dlp every new run uses: the managed current version, else YTDLP_PATH's. */
export function currentYtdlp(c: Pick<Config, 'ytdlpPath' | 'ytdlpToolsDir'>): { version: string; binary: string; managed: boolean; previous: string[] } {
  const s = readState(c);
  if (s.current && fs.existsSync(wrapperOf(c, s.current))) return { version: s.current, binary: wrapperOf(c, s.current), managed: true, previous: s.previous };
  return { version: versionOfBundled(c.ytdlpPath), binary: c.ytdlpPath, managed: false, previous: s.previous };
}
