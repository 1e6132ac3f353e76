import assert from 'node:assert/strict';
import { startApiHarness, type ApiHarness } from './helpers/api-harness';

const SOURCE = 'http://127.0.0.1:9/video.mp4';

describe('media operations API: download clip/processing, preview and fingerprint requests', function () {
  let h: ApiHarness;
  let key: string;
  let accountId: string;
  before(async () => {
    h = await startApiHarness('sqlite');
    ({ key, accountId } = await h.newAccount('business'));
  });
  after(async () => {
    await h?.close();
  });

  const post = (p: string, body: Record<string, unknown>) => h.request('POST', p, { key, body });
  const lastStarted = () => h.orchestrator.started[h.orchestrator.started.length - 1]!;

  describe('POST /v1/download', () => {
    it('accepts clip times in every spelling and charges 1 credit without processing', async () => {
      const before = await h.balance(accountId);
      const res = await post('/v1/download', { url: SOURCE, clip_start: '00:00:01.5', clip_end: '01:02' });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.credits_charged, 1);
      assert.equal(await h.balance(accountId), before - 1);
      assert.deepEqual([lastStarted().params], [{ url: SOURCE, quality: 'best', format: null, clip_start: '00:00:01.5', clip_end: '01:02', processing: null, subtitles: null, webhook_url: null }]);
      for (const [clip_start, clip_end] of [[2, 7.25], ['3', '4.5'], [null, '0:30']]) {
        assert.equal((await post('/v1/download', { url: SOURCE, clip_start, clip_end })).status, 202, `${clip_start}–${clip_end}`);
      }
    });

    it('charges 2 credits with processing and echoes the options without duplicates', async () => {
      const before = await h.balance(accountId);
      const res = await post('/v1/download', { url: SOURCE, quality: 'audio', format: 'mp3', processing: ['normalize', 'denoise', 'normalize'] });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.credits_charged, 2);
      assert.equal(await h.balance(accountId), before - 2);
      assert.deepEqual((lastStarted().params as { processing: string[] }).processing, ['normalize', 'denoise']);
      const none = await post('/v1/download', { url: SOURCE, processing: [] });
      assert.equal(none.body.credits_charged, 1, 'an empty list is no processing');
    });

    it('422 when clip_end is not after clip_start, for bad time strings and unknown processing options', async () => {
      for (const [body, field, detail] of [
        [{ clip_start: '00:05', clip_end: '00:05' }, 'clip_end', /clip_end must be after clip_start/],
        [{ clip_start: '10', clip_end: '00:04' }, 'clip_end', /clip_end must be after clip_start/],
        [{ clip_start: '1:75' }, 'clip_start', /HH:MM:SS, MM:SS or a number of seconds/],
        [{ clip_end: -3 }, 'clip_end', /^clip_end: must not be negative$/],
        [{ processing: ['louder'] }, 'processing.0', /normalize/],
        [{ quality: 'audio', format: 'mp4', processing: ['normalize'] }, 'format', /audio-only/],
      ] as const) {
        const res = await post('/v1/download', { url: SOURCE, ...body });
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.match(res.body.detail, detail);
        assert.equal(res.body.errors[0].field, field);
      }
    });
  });

  describe('POST /v1/preview', () => {
    it('fills each type’s defaults, echoes only the parameters that apply, and charges 1 credit', async () => {
      const expected = {
        gif: { start: null, duration: 5, width: 480, fps: 10 },
        thumbnail: { timestamp: null, width: 480 },
        mosaic: { columns: 4, rows: 4, width: 480 },
        clip: { start: null, duration: 10, width: 480 },
        storyboard: { interval: null, width: 160, columns: 10 },
      };
      for (const [type, fields] of Object.entries(expected)) {
        const res = await post('/v1/preview', { url: SOURCE, preview_type: type });
        assert.equal(res.status, 202, res.text);
        assert.equal(res.body.credits_charged, 1);
        assert.equal(res.body.job_type, 'preview');
        const base = { url: SOURCE, preview_type: type, webhook_url: null, timestamp: null, start: null, duration: null, width: 480, columns: null, rows: null, fps: null, interval: null };
        assert.deepEqual(lastStarted().params, { ...base, ...fields });
        assert.equal(lastStarted().jobType, 'preview');
      }
    });

    it('accepts every bound, and explicit parameters', async () => {
      for (const body of [
        { preview_type: 'gif', start: '00:01', duration: 15, fps: 20, width: 1920 },
        { preview_type: 'gif', duration: 0.5, fps: 1, width: 16 },
        { preview_type: 'thumbnail', timestamp: '01:30', width: 320 },
        { preview_type: 'mosaic', columns: 8, rows: 8, width: 1280 },
        { preview_type: 'mosaic', columns: 1, rows: 1 },
        { preview_type: 'clip', start: 75.5, duration: 30, width: 640 },
        { preview_type: 'storyboard', interval: 600, width: 640, columns: 20 },
        { preview_type: 'storyboard', interval: 0.5, width: 32, columns: 1 },
      ]) {
        const res = await post('/v1/preview', { url: SOURCE, ...body });
        assert.equal(res.status, 202, `${JSON.stringify(body)}: ${res.text}`);
        const params = lastStarted().params as unknown as Record<string, unknown>;
        for (const [k, v] of Object.entries(body)) assert.equal(params[k], typeof v === 'number' && (k === 'start' || k === 'timestamp') ? String(v) : v, k);
      }
    });

    it('ignores parameters that do not apply to the type, even out-of-bound ones', async () => {
      const res = await post('/v1/preview', { url: SOURCE, preview_type: 'thumbnail', fps: 99, duration: 1000, columns: 40, start: 'soon' });
      assert.equal(res.status, 202, res.text);
      const p = lastStarted().params as unknown as Record<string, unknown>;
      assert.deepEqual([p.fps, p.duration, p.columns, p.start], [null, null, null, null]);
      const gif = await post('/v1/preview', { url: SOURCE, preview_type: 'gif', timestamp: 'x', columns: 0 });
      assert.equal(gif.status, 202, gif.text);
    });

    it('422 for out-of-bound values and bad types, naming the field', async () => {
      for (const [body, field] of [
        [{ preview_type: 'gif', duration: 16 }, 'duration'],
        [{ preview_type: 'gif', duration: 0 }, 'duration'],
        [{ preview_type: 'gif', fps: 21 }, 'fps'],
        [{ preview_type: 'gif', fps: 0 }, 'fps'],
        [{ preview_type: 'gif', fps: 12.5 }, 'fps'],
        [{ preview_type: 'clip', duration: 31 }, 'duration'],
        [{ preview_type: 'clip', duration: '10' }, 'duration'],
        [{ preview_type: 'mosaic', columns: 9 }, 'columns'],
        [{ preview_type: 'mosaic', rows: 0 }, 'rows'],
        [{ preview_type: 'mosaic', width: 1921 }, 'width'],
        [{ preview_type: 'thumbnail', width: 15 }, 'width'],
        [{ preview_type: 'thumbnail', timestamp: '1:2:3:4' }, 'timestamp'],
        [{ preview_type: 'clip', start: 'later' }, 'start'],
        [{ preview_type: 'poster' }, 'preview_type'],
        [{}, 'preview_type'],
      ] as const) {
        const res = await post('/v1/preview', { url: SOURCE, ...body });
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.equal(res.body.errors[0].field, field, JSON.stringify(res.body));
        assert.match(res.body.detail, new RegExp(`^${field}: `));
      }
      const bounds = await post('/v1/preview', { url: SOURCE, preview_type: 'gif', duration: 16 });
      assert.equal(bounds.body.detail, 'duration: must be at most 15');
    });
  });

  describe('POST /v1/fingerprint', () => {
    it('defaults to hash_size 16 and 25% of the duration; accepts 8 and 32; charges 1 credit', async () => {
      const res = await post('/v1/fingerprint', { url: SOURCE });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.credits_charged, 1);
      assert.equal(res.body.job_type, 'fingerprint');
      assert.deepEqual(lastStarted().params, { url: SOURCE, timestamp: null, hash_size: 16, webhook_url: null });
      for (const hash_size of [8, 32]) {
        assert.equal((await post('/v1/fingerprint', { url: SOURCE, hash_size, timestamp: '00:10' })).status, 202);
        assert.deepEqual(lastStarted().params, { url: SOURCE, timestamp: '00:10', hash_size, webhook_url: null });
      }
    });

    it('422 for another hash_size or a bad timestamp', async () => {
      for (const [body, field] of [
        [{ hash_size: 12 }, 'hash_size'],
        [{ hash_size: '16' }, 'hash_size'],
        [{ timestamp: 'middle' }, 'timestamp'],
      ] as const) {
        const res = await post('/v1/fingerprint', { url: SOURCE, ...body });
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.equal(res.body.errors[0].field, field);
      }
      assert.match((await post('/v1/fingerprint', { url: SOURCE, hash_size: 12 })).body.detail, /hash_size: must be 8, 16 or 32/);
    });
  });

  it('documents both endpoints in the OpenAPI document', async () => {
    const doc = await h.request('GET', '/v1/openapi.json');
    assert.ok(doc.body.paths['/v1/preview']?.post);
    assert.ok(doc.body.paths['/v1/fingerprint']?.post);
  });
});
