// The operations' request forms (strict, with defaults and bounds) and their prices.
import assert from 'node:assert/strict';
import { OPERATIONS } from '../../operations/registry';

const URL = 'https://example.com/v.mp4';
const issues = (r: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) => (r.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`);

describe('operation forms', () => {
  it('a download takes its defaults and costs 1 credit, 2 with processing', () => {
    const plain = OPERATIONS.download.request.parse({ url: URL });
    assert.equal(plain.quality, 'best');
    assert.equal(OPERATIONS.download.cost(plain), 1);
    assert.equal(OPERATIONS.download.cost(OPERATIONS.download.request.parse({ url: URL, processing: ['normalize'] })), 2);
  });

  it('refuses unknown fields by name', () => {
    const r = OPERATIONS.download.request.safeParse({ url: URL, qualty: '720p' });
    assert.equal(r.success, false);
    assert.match(issues(r).join('; '), /qualty/);
  });

  it('a preview keeps only the fields of its type, with the defaults and bounds of the contract', () => {
    const gif = OPERATIONS.preview.request.parse({ url: URL, preview_type: 'gif' });
    assert.deepEqual([gif.width, gif.start, gif.duration, gif.fps, gif.columns], [480, null, 5, 10, null]);
    const mosaic = OPERATIONS.preview.request.parse({ url: URL, preview_type: 'mosaic', columns: 3, rows: 2, fps: 12 });
    assert.deepEqual([mosaic.columns, mosaic.rows, mosaic.fps], [3, 2, null], 'fps does not apply to a mosaic: accepted, ignored');
    const r = OPERATIONS.preview.request.safeParse({ url: URL, preview_type: 'gif', duration: 16 });
    assert.equal(r.success, false);
    assert.match(issues(r).join('; '), /duration: must be at most 15/);
    assert.equal(OPERATIONS.preview.request.safeParse({ url: URL, preview_type: 'poster' }).success, false);
  });

  it('a source is a url or an upload_id, exactly one', () => {
    assert.equal(OPERATIONS.fingerprint.request.safeParse({}).success, false);
    assert.equal(OPERATIONS.fingerprint.request.safeParse({ url: URL, upload_id: 'upl_x' }).success, false);
  });

  it('every price phrase says what cost() charges', () => {
    for (const op of Object.values(OPERATIONS)) {
      const credits = [...op.costText.matchAll(/(\d+) credits?/g)].map((m) => Number(m[1]));
      assert.ok(credits.length > 0, op.jobType);
      assert.equal(credits[0], op.cost(op.request.parse(op.jobType === 'translate' ? { url: URL, target_language: 'es' } : op.jobType === 'preview' ? { url: URL, preview_type: 'thumbnail' } : { url: URL }) as never), op.jobType);
    }
  });
});
