// After an incremental tsc: removes compiled files whose TypeScript source is gone (a deleted or
// renamed test would otherwise still run from dist/), keeping what the build writes itself.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dist = path.join(root, 'dist');
const own = new Set(['workflow-bundle.js', 'workflow-bundle.json', '.tsbuildinfo']);
let removed = 0;
for (const entry of fs.existsSync(dist) ? fs.readdirSync(dist, { recursive: true, encoding: 'utf8' }) : []) {
  const rel = entry.split(path.sep).join('/');
  const m = /^(.*)\.js(\.map)?$/.exec(rel);
  if (!m || own.has(rel) || own.has(rel.replace(/\.map$/, ''))) continue;
  if (fs.existsSync(path.join(root, `${m[1]}.ts`))) continue;
  fs.rmSync(path.join(dist, entry), { force: true });
  removed++;
}
if (removed) console.log(`prune-dist: removed ${removed} compiled file(s) whose source is gone`);
