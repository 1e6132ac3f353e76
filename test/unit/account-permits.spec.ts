// A queue's run permits shared by account: one account never holds the last one, and waiting steps
// are let in fewest-running-account first.
import assert from 'node:assert/strict';
import { AccountPermits, reservedPermits } from '../../workers/account-share.interceptor';
import { MAX_TASK_SLOTS, planShareProblems, queueShare } from '../../workers/plan-shares';
import { QUEUE_TABLE } from '../../workers/queues';
import { PLANS } from '../../lib/plans';

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

  it("a quarter of the permits (at least one) are another account's: a neighbour's five steps start at once on 20", async () => {
    assert.deepEqual([1, 2, 4, 6, 20].map(reservedPermits), [1, 1, 1, 2, 5]);
    const permits = new AccountPermits(20);
    for (let i = 0; i < 15; i++) await permits.acquire('big', never);
    assert.equal(await settled(permits.acquire('big', never)), false, 'the sixteenth step of one account waits');
    for (let i = 0; i < 5; i++) assert.equal(await settled(permits.acquire('neighbour', never)), true, `neighbour step ${i + 1} starts at once`);
  });
});

describe('plan shares: the plan table against the queues', () => {
  it('the shipped table and defaults pass; every job queue but webhooks is shared by account or has more slots than a plan runs jobs', () => {
    assert.deepEqual(planShareProblems({}), []);
    const largest = Math.max(...Object.values(PLANS).map((p) => p.maxRunningJobs));
    const fetch = queueShare(QUEUE_TABLE['media-fetch'], 20);
    assert.deepEqual(fetch, { capacity: 20, reserve: 5, slots: 20 + largest }, 'the worker takes every step one account can have in flight, plus the permits');
    assert.equal(queueShare(QUEUE_TABLE.webhooks, 20).reserve, null);
  });

  it('refuses a plan whose running jobs would need more task slots than a worker takes', () => {
    const problems = planShareProblems({}, { ...PLANS, huge: { maxRunningJobs: 1000, maxInfoReads: 8 } });
    assert.ok(problems.some((p) => p.includes('the huge plan') && p.includes('media-fetch') && p.includes(String(MAX_TASK_SLOTS))), problems.join('\n'));
  });

  it('refuses a plan that runs as many jobs as control has slots, and limits that are not whole numbers', () => {
    const problems = planShareProblems({ control: 40 }, { ...PLANS, big: { maxRunningJobs: 40, maxInfoReads: 0 } });
    assert.ok(problems.some((p) => p.includes("the big plan's maxInfoReads is 0")), problems.join('\n'));
    const control = planShareProblems({ control: 40 }, { ...PLANS, big: { maxRunningJobs: 40, maxInfoReads: 4 } });
    assert.ok(control.some((p) => p.startsWith('control runs 40 steps at once') && p.includes('big plan')), control.join('\n'));
  });

  it('refuses a shared queue of one permit: one account would hold it', () => {
    const problems = planShareProblems({ 'media-speech': 1 });
    assert.ok(problems.some((p) => p.startsWith('media-speech runs 1 step at once')), problems.join('\n'));
  });
});
