import assert from 'node:assert/strict';
import { retryPatiently } from '../../lib/patience';

describe('retryPatiently: tries again with a doubling wait while the error is worth it and the patience lasts', () => {
  const failing = (times: number, err = new Error('away')) => {
    let calls = 0;
    return { attempt: async () => (++calls <= times ? Promise.reject(err) : 'done'), calls: () => calls };
  };

  it('returns the first success, told of each wait, doubled up to the cap', async () => {
    const f = failing(4);
    const waits: number[] = [];
    assert.equal(await retryPatiently(f.attempt, { firstMs: 1, maxMs: 4, withinMs: 5_000, onRetry: (_e, w) => waits.push(w) }), 'done');
    assert.equal(f.calls(), 5);
    assert.deepEqual(waits, [1, 2, 4, 4]);
  });

  it('throws at once an error that is not retryable', async () => {
    const f = failing(3, new Error('misconfigured'));
    await assert.rejects(retryPatiently(f.attempt, { firstMs: 1, maxMs: 4, withinMs: 5_000, retryable: () => false }), /misconfigured/);
    assert.equal(f.calls(), 1);
  });

  it('throws the last error once the next wait would end past its patience', async () => {
    const f = failing(1_000);
    await assert.rejects(retryPatiently(f.attempt, { firstMs: 20, maxMs: 20, withinMs: 50 }), /away/);
    assert.ok(f.calls() >= 2 && f.calls() <= 4, `${f.calls()} tries`);
  });
});
