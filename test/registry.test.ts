import assert from 'node:assert/strict';
import type { MikroORM } from '@mikro-orm/core';
import type { EgressProxy } from '../engines/egress/egress-proxy';
import { LocalStorage } from '../engines/storage';
import { loadConfig } from '../lib/config';
import { JOB_TYPES } from '../lib/jobs';
import { OPERATIONS } from '../lib/operations';
import { TASK_QUEUES } from '../lib/queues';
import { ACTIVITY_PLAN, missingActivities } from '../workflows/activity-plan';
import { RUNNERS } from '../workflows/runners';
import { QUEUE_TABLE } from '../workers/queues';
import { queueActivities } from '../workers/workers';
import { startApiHarness, type ApiHarness } from './helpers/api-harness';

describe('operation registry and queue table', () => {
  let h: ApiHarness;
  before(async () => {
    h = await startApiHarness('sqlite');
  });
  after(() => h?.close());

  it('every job type is declared once and has a workflow runner', () => {
    assert.deepEqual(Object.keys(OPERATIONS).sort(), [...JOB_TYPES].sort());
    assert.deepEqual(Object.keys(RUNNERS).sort(), [...JOB_TYPES].sort());
    for (const t of JOB_TYPES) {
      const op = OPERATIONS[t];
      assert.equal(op.jobType, t);
      assert.equal(typeof RUNNERS[t], 'function', `runner for ${t}`);
      for (const q of op.queues) assert.ok((TASK_QUEUES as readonly string[]).includes(q), `${t} uses an unknown queue ${q}`);
    }
    assert.equal(new Set(Object.values(OPERATIONS).map((o) => o.path)).size, JOB_TYPES.length, 'paths are unique');
    assert.equal(new Set(Object.values(OPERATIONS).map((o) => o.mcp.tool)).size, JOB_TYPES.length, 'MCP tool names are unique');
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
      assert.ok(ACTIVITY_PLAN[queue].length > 0, queue);
    }
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
});
