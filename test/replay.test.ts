import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { projectRoot } from '../lib/config';
import { workflowBundle } from '../workers/workflow-bundle';
import { quietRuntime } from './helpers/temporal';

const DIR = path.join(projectRoot, 'test/histories');

describe('replay of recorded workflow histories', () => {
  it('replays every recorded history without a determinism violation', async () => {
    quietRuntime();
    const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 3, 'recorded histories are committed under test/histories');
    const histories = files.map((f) => ({ workflowId: path.basename(f, '.json'), history: JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as unknown }));
    const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories as never);
    let count = 0;
    for await (const r of results) {
      count++;
      assert.equal(r.error, undefined, `${r.workflowId}: ${String(r.error)}`);
    }
    assert.equal(count, files.length);
  });

  it('uses the bundle make build wrote (current with the compiled workflows), not webpack at start', async () => {
    const bundle = await workflowBundle();
    assert.ok('codePath' in bundle, 'workers load dist/workflow-bundle.js');
    assert.equal(bundle.codePath, path.join(projectRoot, 'dist/workflow-bundle.js'));
    assert.match(fs.readFileSync(bundle.codePath, 'utf8'), /mediaJobWorkflow/);
  });
});
