// README.md's "Code map" is the first thing a newcomer reads of the code: it must name every source
// folder, and what it names must exist. Reads files only (no servers, no tools).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

// compiled to dist/test/unit/: the repository is three folders up
const root = path.resolve(__dirname, '..', '..', '..');
const SECTION = '## Code map';

/** The Code map table's rows: its first cell (the folders or files) and its second (what they hold). */
function codeMapRows(): { folders: string; holds: string }[] {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n${SECTION}\n`);
  assert.ok(start >= 0, `README.md has no "${SECTION}" section`);
  const rest = readme.slice(start + SECTION.length + 2);
  const end = rest.search(/^## /m);
  const rows = (end < 0 ? rest : rest.slice(0, end))
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .slice(1) // the header
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .map(([, folders = '', holds = '']) => ({ folders, holds }));
  assert.ok(rows.length > 0, 'the Code map table has no rows');
  return rows;
}

/** What a cell names in backticks. */
const quoted = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** Whether a folder holds a .ts file, at any depth. */
function holdsTypeScript(dir: string): boolean {
  return fs.readdirSync(dir, { withFileTypes: true }).some((e) => (e.isDirectory() ? holdsTypeScript(path.join(dir, e.name)) : e.name.endsWith('.ts')));
}

/** Not source: installed and built things, the data folder, dot-folders (.git, .venv, .tools…), and test/ (the suites, not the service). */
const NOT_SOURCE = new Set(['node_modules', 'dist', 'data', 'test']);

describe('README code map', () => {
  it('names every top-level folder holding TypeScript at any depth, but node_modules, dist, data, test and dot-folders, in its first column', () => {
    const sourceFolders = fs
      .readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !NOT_SOURCE.has(e.name) && holdsTypeScript(path.join(root, e.name)))
      .map((e) => `${e.name}/`);
    assert.ok(sourceFolders.includes('operations/') && sourceFolders.includes('lib/'), `the rule finds no source folders: ${sourceFolders.join(', ')}`);
    const mapped = new Set(codeMapRows().flatMap((r) => quoted(r.folders)));
    const missing = sourceFolders.filter((f) => !mapped.has(f)).sort();
    assert.deepEqual(missing, [], `README.md's Code map has no row for ${missing.join(', ')}`);
  });

  it('names only paths that exist: its first column at the root, and the paths in the second under its folder or at the root', () => {
    const exists = (p: string) => fs.existsSync(path.join(root, p.replace(/\/$/, '')));
    const stale: string[] = [];
    for (const { folders, holds } of codeMapRows()) {
      const names = quoted(folders);
      for (const f of names) if (!f.includes('*') && !exists(f)) stale.push(f);
      // a path: a folder (ends in /), a nested path or a file with an extension; other quoted words are commands and routes
      const paths = quoted(holds).filter((p) => /^[\w.-]+(\/[\w.-]+)*\/?$/.test(p) && (p.includes('/') || /\.\w+$/.test(p)));
      for (const p of paths) if (!exists(p) && !names.some((f) => f.endsWith('/') && exists(`${f}${p}`))) stale.push(`${p} (in the row of ${names.join(', ')})`);
    }
    assert.deepEqual(stale, [], `README.md's Code map names what is not there: ${stale.join('; ')}`);
  });

  it('is what the image builds: the Dockerfile copies every folder tsconfig.json compiles', () => {
    const compiled: string[] = (JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8')) as { include: string[] }).include;
    const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const copied = new Set([...dockerfile.matchAll(/^COPY\s+(?!--)(\S+)\s+\1\s*$/gm)].map((m) => m[1]!));
    const missing = compiled.filter((folder) => !copied.has(folder));
    assert.deepEqual(missing, [], `the Dockerfile does not COPY ${missing.join(', ')}, so the image's tsc cannot compile what imports them`);
  });
});
