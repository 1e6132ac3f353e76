import assert from 'node:assert/strict';
import type { MikroORM } from '@mikro-orm/core';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import { LocalStorage } from '../engines/storage';
import { loadConfig } from '../lib/config';
import { assertRegistrySound, JOB_TYPES, OPERATIONS, registryProblems } from '../operations/registry';
import { TASK_QUEUES } from '../lib/queues';
import { ACTIVITY_PLAN, missingActivities } from '../workflows/activity-plan';
import { QUEUE_TABLE } from '../workers/queues';
import { queueActivities } from '../workers/workers';
import { startApiHarness, type ApiHarness } from './helpers/api-harness';

describe('operation registry and queue table', () => {
  let h: ApiHarness;
  before(async () => {
    h = await startApiHarness('sqlite');
  });
  after(() => h?.close());

  it('every job type is declared once, with a workflow runner, a view and its steps on a known queue', () => {
    assert.deepEqual(Object.keys(OPERATIONS), [...JOB_TYPES]);
    for (const t of JOB_TYPES) {
      const op = OPERATIONS[t];
      assert.equal(op.jobType, t);
      assert.equal(typeof op.runner, 'function', `runner for ${t}`);
      assert.equal(typeof op.show, 'function', `dashboard view for ${t}`);
      if (op.steps) assert.ok((TASK_QUEUES as readonly string[]).includes(op.steps.queue), `${t} uses an unknown queue ${op.steps.queue}`);
    }
    assert.deepEqual(registryProblems(), []);
    assert.equal(new Set(Object.values(OPERATIONS).map((o) => o.path)).size, JOB_TYPES.length, 'paths are unique');
    assert.equal(new Set(Object.values(OPERATIONS).map((o) => o.mcp.tool)).size, JOB_TYPES.length, 'MCP tool names are unique');
  });

  it('the registry is refused when two operations claim one path or MCP tool, or a key is not its job type', () => {
    const ops = OPERATIONS as unknown as Record<string, { path: string; mcp: { tool: string }; jobType: string }>;
    const saved = { path: ops.comments!.path, tool: ops.comments!.mcp, jobType: ops.comments!.jobType };
    try {
      ops.comments!.path = ops.download!.path;
      ops.comments!.mcp = { ...saved.tool, tool: ops.preview!.mcp.tool };
      ops.comments!.jobType = 'remarks';
      const problems = registryProblems();
      assert.ok(problems.some((p) => p.includes(`path ${ops.download!.path}`)), problems.join('; '));
      assert.ok(problems.some((p) => p.includes(`MCP tool ${ops.preview!.mcp.tool}`)), problems.join('; '));
      assert.ok(problems.some((p) => p.includes('lists remarks under the name comments')), problems.join('; '));
      assert.throws(() => assertRegistrySound(), /operation registry is not sound.*refusing to start/);
    } finally {
      Object.assign(ops.comments!, { path: saved.path, mcp: saved.tool, jobType: saved.jobType });
    }
    assert.deepEqual(registryProblems(), []);
  });

  it('every operation is a REST route and in the OpenAPI document', async () => {
    const doc = (await h.request('GET', '/v1/openapi.json')).body;
    const { key } = await h.newAccount('pro', 100);
    for (const op of Object.values(OPERATIONS)) {
      assert.ok(doc.paths[op.path]?.post, `${op.path} is documented`);
      assert.ok(doc.paths[op.path].post.operationId, `${op.path} has an operationId`);
      // an empty body reaches the operation's own validation: 422 naming url, not 404
      const res = await h.request('POST', op.path, { key, body: {} });
      assert.equal(res.status, 422, `${op.path}: ${res.text}`);
      assert.ok(res.body.errors.some((e: { field: string }) => e.field === 'url' || e.field === 'preview_type'), res.text);
    }
  });

  it('every activity that workflows call is registered on the queue it is sent to', () => {
    const config = loadConfig({ DATA_DIR: '/tmp/mediasvc-registry-test' });
    const deps = { config, storage: new LocalStorage(config), orm: {} as MikroORM, egress: {} as EgressProxy };
    for (const queue of TASK_QUEUES) {
      const registered = queueActivities(queue, deps);
      assert.deepEqual(missingActivities(queue, registered), [], queue);
      assert.ok(Object.keys(registered).length > 0, queue);
      for (const name of ACTIVITY_PLAN[queue]) assert.equal(typeof registered[name], 'function', `${queue}: ${name}`);
    }
  });

  it('workers keep at most WORKFLOW_CACHE_SIZE workflows cached (500 unless set; fewer than 2 is refused)', () => {
    assert.equal(loadConfig({ DATA_DIR: '/tmp/mediasvc-registry-test' }).workflowCacheSize, 500);
    assert.equal(loadConfig({ DATA_DIR: '/tmp/mediasvc-registry-test', WORKFLOW_CACHE_SIZE: '40' }).workflowCacheSize, 40);
    assert.throws(() => loadConfig({ DATA_DIR: '/tmp/mediasvc-registry-test', WORKFLOW_CACHE_SIZE: '1' }), /WORKFLOW_CACHE_SIZE/);
  });

  it('a worker refuses to start when its queue lacks an activity a workflow calls', () => {
    const config = loadConfig({ DATA_DIR: '/tmp/mediasvc-registry-test' });
    const deps = { config, storage: new LocalStorage(config), egress: {} as EgressProxy };
    const spec = QUEUE_TABLE['media-fetch'];
    const original = spec.activities;
    try {
      (spec as { activities: (d: typeof deps) => Record<string, unknown> }).activities = (d) => {
        const { probeSource: _dropped, ...rest } = original(d);
        return rest;
      };
      assert.throws(() => queueActivities('media-fetch', deps), /does not register probeSource/);
    } finally {
      spec.activities = original;
    }
    assert.throws(() => queueActivities('control', deps), /needs the database/);
  });

  it('a worker refuses to start when two operations register one activity name on its queue', () => {
    const config = loadConfig({ DATA_DIR: '/tmp/mediasvc-registry-test' });
    const deps = { config, storage: new LocalStorage(config), egress: {} as EgressProxy };
    const steps = OPERATIONS.fingerprint.steps;
    const original = steps.create;
    try {
      (steps as { create: (d: never) => Record<string, unknown> }).create = () => ({ makePreview: async () => undefined });
      assert.throws(() => queueActivities('media-process', deps), /makePreview is registered by both preview and fingerprint/);
      // and a name the queue's shared steps already have
      (steps as { create: (d: never) => Record<string, unknown> }).create = () => ({ resolveSource: async () => undefined });
      (steps as { queue: string }).queue = 'media-fetch';
      assert.throws(() => queueActivities('media-fetch', deps), /resolveSource is registered by both the queue's shared steps and fingerprint/);
    } finally {
      Object.assign(steps, { create: original, queue: 'media-process' });
    }
    assert.ok(typeof queueActivities('media-process', deps).fingerprintFrame === 'function');
  });
});
