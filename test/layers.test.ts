// The layer rules are a check that can fail: `make lint-layers` (run by `make lint`) refuses a
// deliberate upward import and a cycle written as scratch files, for values and for types alike, and
// passes on the tree as it is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

function lintLayers(): { status: number | null; output: string } {
  const r = spawnSync('make', ['-s', 'lint-layers'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Runs `make lint-layers` with scratch source files in place, removing them after. */
function withScratch(files: Record<string, string>): { status: number | null; output: string } {
  const paths = Object.keys(files).map((f) => path.join(root, f));
  try {
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(root, f), text);
    return lintLayers();
  } finally {
    for (const p of paths) fs.rmSync(p, { force: true });
  }
}

describe('layers (dependency-cruiser in make lint)', function () {
  this.timeout(600_000);

  it('passes on the tree as it is', () => {
    const r = lintLayers();
    assert.equal(r.status, 0, r.output);
  });

  it('fails on an engine importing an operation, a lib module importing an engine, and workflow code importing Node', () => {
    const r = withScratch({
      'engines/zz-layers-scratch.ts': "import { PROCESSING_OPTIONS } from '../operations/download/spec';\nexport const scratch = PROCESSING_OPTIONS;\n",
      'lib/zz-layers-scratch.ts': "import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';\nexport const scratch = createFfmpegEngine;\n",
      'workflows/zz-layers-scratch.ts': "import fs from 'node:fs';\nexport const scratch = fs;\n",
    });
    assert.notEqual(r.status, 0, r.output);
    for (const rule of ['engines-know-no-domain: engines/zz-layers-scratch.ts', 'lib-is-the-bottom: lib/zz-layers-scratch.ts', 'workflows-no-node-builtins: workflows/zz-layers-scratch.ts']) {
      assert.ok(r.output.includes(rule), `${rule} not reported:\n${r.output}`);
    }
  });

  it('fails on two modules that import each other for values', () => {
    const r = withScratch({
      'lib/zz-layers-scratch-a.ts': "import { b } from './zz-layers-scratch-b';\nexport const a = () => b;\n",
      'lib/zz-layers-scratch-b.ts': "import { a } from './zz-layers-scratch-a';\nexport const b = () => a;\n",
    });
    assert.notEqual(r.status, 0, r.output);
    assert.match(r.output, /no-cycles: lib\/zz-layers-scratch-[ab]\.ts/);
  });

  it('fails on type-only imports too: a lib module importing an entry point\'s type, a workflow the queue table\'s, two modules each other\'s', () => {
    const r = withScratch({
      'lib/zz-layers-scratch.ts': "import type { ApiDeps } from '../api/context';\nexport type Scratch = ApiDeps;\n",
      'workflows/zz-layers-scratch.ts': "import type { QueueActivities } from '../workers/queues';\nexport type Scratch = QueueActivities<'control'>;\n",
      'engines/zz-layers-scratch-a.ts': "import type { B } from './zz-layers-scratch-b';\nexport interface A { b?: B }\n",
      'engines/zz-layers-scratch-b.ts': "import type { A } from './zz-layers-scratch-a';\nexport interface B { a?: A }\n",
    });
    assert.notEqual(r.status, 0, r.output);
    for (const rule of ['lib-is-the-bottom: lib/zz-layers-scratch.ts', 'nothing-imports-the-workers: workflows/zz-layers-scratch.ts']) {
      assert.ok(r.output.includes(rule), `${rule} not reported:\n${r.output}`);
    }
    assert.match(r.output, /no-cycles: engines\/zz-layers-scratch-[ab]\.ts/);
  });

  it('an operation lives in its folder: outside it, only the registry names the newest (waveform), in code', () => {
    const naming: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
        const rel = path.join(dir, e.name);
        if (e.isDirectory()) walk(rel);
        else if (rel.endsWith('.ts') && !rel.startsWith('operations/waveform/')) {
          // the job type as a string, or an import of the folder: what adding an operation would have to edit
          const code = fs.readFileSync(path.join(root, rel), 'utf8').replace(/^\s*(\/\/|\*|\/\*).*$/gm, '');
          if (/['"`]waveform['"`]|\/waveform['"/]/.test(code)) naming.push(rel);
        }
      }
    };
    for (const dir of ['lib', 'engines', 'db', 'accounts', 'keys', 'credits', 'uploads', 'info', 'jobs', 'webhooks', 'platforms', 'activities', 'operations', 'workflows', 'workers', 'api', 'bin']) walk(dir);
    assert.deepEqual(naming, ['operations/registry.ts'], 'adding an operation needs its folder, one registry line and docs');
  });
});
