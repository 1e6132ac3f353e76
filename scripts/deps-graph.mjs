// Draws the layers (docs/layers.svg): one box per top folder, ranked bottom-up as .dependency-cruiser.cjs
// orders them, an arrow per folder-to-folder import. Grey arrows point down or sideways; red ones point
// up a layer (what the rules do not yet forbid), dashed ones are type-only. Needs Graphviz's `dot`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const LAYERS = [
  ['api', 'workers', 'bin'],
  ['activities', 'operations', 'workflows'],
  ['db', 'jobs', 'webhooks'],
  ['engines'],
  ['lib'],
];
const folders = LAYERS.flat();
const rank = new Map(LAYERS.flatMap((names, i) => names.map((n) => [n, LAYERS.length - i])));
const top = (p) => p.split('/')[0];

const cruise = JSON.parse(
  execFileSync('npx', ['depcruise', '--output-type', 'json', '--include-only', `^(${folders.join('|')})/`, ...folders], { maxBuffer: 256 * 2 ** 20 }).toString(),
);
const edges = new Map();
for (const m of cruise.modules) {
  for (const d of m.dependencies) {
    const [from, to] = [top(m.source), top(d.resolved)];
    if (from === to || !rank.has(from) || !rank.has(to)) continue;
    const key = `${from}->${to}`;
    const typeOnly = d.dependencyTypes.includes('type-only');
    const e = edges.get(key) ?? { from, to, count: 0, typeOnly: true };
    e.count++;
    e.typeOnly &&= typeOnly;
    edges.set(key, e);
  }
}

const lines = ['digraph layers {', '  rankdir=TB; nodesep=0.3; ranksep=0.5;', '  node [shape=box style="rounded,filled" fillcolor="#ffffcc" fontname="Helvetica" fontsize=11];', '  edge [fontname="Helvetica" fontsize=8 arrowsize=0.6];'];
for (const names of LAYERS) lines.push(`  { rank=same; ${names.map((n) => `"${n}"`).join('; ')}; }`);
for (const e of [...edges.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to))) {
  const up = rank.get(e.to) > rank.get(e.from);
  lines.push(`  "${e.from}" -> "${e.to}" [label="${e.count}" color="${up ? '#cc0000' : '#00000055'}" fontcolor="${up ? '#cc0000' : '#555555'}"${e.typeOnly ? ' style=dashed' : ''}];`);
}
lines.push('}');
const out = process.argv[2] ?? 'docs/layers.svg';
const svg = execFileSync('dot', [out.endsWith('.png') ? '-Tpng' : '-Tsvg'], { input: lines.join('\n') });
fs.writeFileSync(out, svg);
const upward = [...edges.values()].filter((e) => rank.get(e.to) > rank.get(e.from));
console.log(`${edges.size} folder-to-folder edges, ${upward.length} pointing up a layer: ${upward.map((e) => `${e.from} → ${e.to} (${e.count})`).join(', ')}`);
