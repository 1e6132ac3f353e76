// Draws the layers (docs/layers.svg): one box per top folder, ranked as .dependency-cruiser.cjs orders
// them (the domains' REST routes and dashboard pages drawn as one box among the entry points, their
// *.workflow.ts among the workflows), an arrow per box-to-box import with its count. Grey arrows point
// down or sideways; orange ones are the two upward imports the rules name (db/orm.ts, the job domain
// through the registry); red ones point up otherwise; dashed ones are type-only. Needs Graphviz's `dot`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const ADAPTERS = 'routes & pages';
const LAYERS = [
  ['api', 'workers', 'bin', ADAPTERS],
  ['activities', 'operations', 'workflows'],
  ['accounts', 'keys', 'credits', 'uploads', 'info', 'jobs', 'webhooks', 'platforms'],
  ['db'],
  ['engines'],
  ['lib'],
];
const folders = LAYERS.flat().filter((n) => n !== ADAPTERS);
const rank = new Map(LAYERS.flatMap((names, i) => names.map((n) => [n, LAYERS.length - i])));
const top = (p) => p.split('/')[0];
const nodeOf = (p) => (/^(accounts|keys|credits|uploads|info|jobs|webhooks|platforms)\/(routes|[a-z-]+[.]routes|dashboard[.-][^/]*)[.]ts$/.test(p) ? ADAPTERS : /[.]workflow[.]ts$/.test(p) ? 'workflows' : top(p));
const named = (from, to, source) => (source === 'db/orm.ts' && from === 'db') || (from === 'jobs' && to === 'operations');

const cruise = JSON.parse(
  execFileSync('npx', ['depcruise', '--output-type', 'json', '--include-only', `^(${folders.join('|')})/`, ...folders], { maxBuffer: 256 * 2 ** 20 }).toString(),
);
const edges = new Map();
for (const m of cruise.modules) {
  for (const d of m.dependencies) {
    const [from, to] = [nodeOf(m.source), nodeOf(d.resolved)];
    if (from === to || !rank.has(from) || !rank.has(to)) continue;
    const key = `${from}->${to}`;
    const typeOnly = d.dependencyTypes.includes('type-only');
    const e = edges.get(key) ?? { from, to, count: 0, typeOnly: true, named: true };
    e.count++;
    e.typeOnly &&= typeOnly;
    e.named &&= named(from, to, m.source);
    edges.set(key, e);
  }
}

const lines = ['digraph layers {', '  rankdir=TB; nodesep=0.3; ranksep=0.5;', '  node [shape=box style="rounded,filled" fillcolor="#ffffcc" fontname="Helvetica" fontsize=11];', '  edge [fontname="Helvetica" fontsize=8 arrowsize=0.6];'];
for (const names of LAYERS) lines.push(`  { rank=same; ${names.map((n) => `"${n}"`).join('; ')}; }`);
for (const e of [...edges.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to))) {
  const up = rank.get(e.to) > rank.get(e.from);
  const colour = !up ? '#00000055' : e.named ? '#dd7700' : '#cc0000';
  lines.push(`  "${e.from}" -> "${e.to}" [label="${e.count}" color="${colour}" fontcolor="${up ? colour : '#555555'}"${e.typeOnly ? ' style=dashed' : ''}];`);
}
lines.push('}');
const out = process.argv[2] ?? 'docs/layers.svg';
const svg = execFileSync('dot', [out.endsWith('.png') ? '-Tpng' : '-Tsvg'], { input: lines.join('\n') });
fs.writeFileSync(out, svg);
const upward = [...edges.values()].filter((e) => rank.get(e.to) > rank.get(e.from));
console.log(`${edges.size} box-to-box edges, ${upward.length} pointing up a layer: ${upward.map((e) => `${e.from} → ${e.to} (${e.count}${e.typeOnly ? ', type-only' : ''}${e.named ? ', named' : ''})`).join(', ')}`);
