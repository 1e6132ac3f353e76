// A queue's run permits shared by account: one account never holds the last one, and waiting steps
// are let in fewest-running-account first.
import assert from 'node:assert/strict';
import { AccountPermits } from '../../workers/account-share.interceptor';

const never = new AbortController().signal;
const settled = async <T>(p: Promise<T>) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);

describe('account permits', () => {
  it('one account takes all but one permit; another account starts at once; a release lets a waiting step in', async () => {
    const permits = new AccountPermits(3);
    await permits.acquire('a', never);
    const a2 = await permits.acquire('a', never);
    const a3 = permits.acquire('a', never);
    assert.equal(await settled(a3), false, "a third step of a waits: the last permit is another account's");
    await permits.acquire('b', never);
    const b2 = permits.acquire('b', never);
    assert.equal(await settled(b2), false, 'every permit is taken');
    a2();
    assert.equal(await settled(a3), true, 'first come among accounts that run as many');
    assert.equal(await settled(b2), false);
  });

  it('the account running fewest goes first, whoever came first', async () => {
    const permits = new AccountPermits(4);
    const a1 = await permits.acquire('a', never);
    await permits.acquire('a', never);
    await permits.acquire('a', never);
    await permits.acquire('b', never);
    const a4 = permits.acquire('a', never);
    const b2 = permits.acquire('b', never);
    a1();
    assert.equal(await settled(b2), true, 'b runs one, a two');
    assert.equal(await settled(a4), false);
  });

  it('a step cancelled while it waits leaves the queue and holds nothing', async () => {
    const permits = new AccountPermits(2);
    const a1 = await permits.acquire('a', never);
    const abort = new AbortController();
    const waiting = permits.acquire('a', abort.signal);
    abort.abort(new Error('cancelled'));
    await assert.rejects(waiting, /cancelled/);
    a1();
    const again = await permits.acquire('a', never);
    assert.equal(typeof again, 'function');
  });

  it('only the account holding the most permits (more than one) is the crowded one', async () => {
    const permits = new AccountPermits(6);
    await permits.acquire('a', never);
    assert.equal(permits.holdsMost('a'), false, 'one step is never crowded');
    await permits.acquire('a', never);
    await permits.acquire('a', never);
    assert.equal(permits.holdsMost('a'), true, 'alone with three');
    await permits.acquire('b', never);
    await permits.acquire('b', never);
    assert.deepEqual([permits.holdsMost('a'), permits.holdsMost('b')], [true, false]);
    await permits.acquire('b', never);
    assert.deepEqual([permits.holdsMost('a'), permits.holdsMost('b')], [false, false], 'a tie crowds neither');
  });

  it('with one permit, an account may take it', async () => {
    assert.equal(new AccountPermits(1).accountCap, 1);
    assert.equal(typeof (await new AccountPermits(1).acquire('a', never)), 'function');
  });
});
