import fc from 'fast-check';
import { longestWaitMs, nominalDelayMs, retry, retryAtOnce, retryDelayMs, TRY_AGAIN, type RetryPolicy } from '../../lambdas/domain/retry-policy';
import { ManualClock } from '../../lambdas/ports/clock';
import { CALLBACK_POLICY, retryDelayMs as callbackDelayMs } from '../../lambdas/domain/callback';
import { RECORD_BACKOFF } from '../../lambdas/use-cases/backoff';

/** Sleeps by moving a manual clock: the pauses a run took, and how long it "waited", with no real waiting. */
function simulatedTime(start = '2030-01-01T00:00:00Z') {
  const clock = new ManualClock(start);
  const pauses: number[] = [];
  return {
    clock,
    pauses,
    sleep: async (ms: number) => {
      pauses.push(ms);
      clock.advance(ms);
    },
    waitedMs: () => clock.now().getTime() - new Date(start).getTime(),
  };
}

const POLICY: RetryPolicy = { tries: 6, firstDelayMs: 10, maxDelayMs: 80, jitter: 'full' };

describe('the pause before a retry', () => {
  it.each([
    [1, 10],
    [2, 20],
    [3, 40],
    [4, 80],
    [5, 80],
    [40, 80],
  ])('doubles from the first delay up to the cap: retry %i may wait up to %i ms', (n, ceiling) => {
    expect(nominalDelayMs(POLICY, n)).toBe(ceiling);
  });

  it('with full jitter, lies anywhere in [0, ceiling)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (n, r) => {
        const d = retryDelayMs(POLICY, n, r);
        expect(Number.isInteger(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(nominalDelayMs(POLICY, n));
      }),
    );
  });

  it('with equal jitter, is never below half its ceiling nor above it', () => {
    const equal = { ...POLICY, jitter: 'equal' } as const;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, r) => {
        const d = retryDelayMs(equal, n, r);
        expect(d).toBeGreaterThanOrEqual(nominalDelayMs(equal, n) / 2);
        expect(d).toBeLessThanOrEqual(nominalDelayMs(equal, n));
      }),
    );
  });

  it('refuses a retry number that is not a whole number of at least one', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => retryDelayMs(POLICY, bad, 0.5)).toThrow();
  });

  it('is the callbacks\' delay and the recorded writes\' backoff (one policy)', () => {
    for (const n of [1, 2, 5, 12]) {
      for (const r of [0, 0.25, 0.999]) {
        expect(callbackDelayMs(n, r)).toBe(retryDelayMs({ firstDelayMs: CALLBACK_POLICY.firstDelayMs, maxDelayMs: CALLBACK_POLICY.maxDelayMs, jitter: 'equal' }, n, r));
      }
    }
    // The recorded writes keep their limits: 8 tries, at most ~1.5 s of waiting.
    expect(RECORD_BACKOFF.tries).toBe(8);
    expect(longestWaitMs(RECORD_BACKOFF)).toBeLessThanOrEqual(1_600);
  });
});

describe('a run of the policy, on a simulated clock', () => {
  it('stops at the first answer, pausing only between tries', async () => {
    const time = simulatedTime();
    let tries = 0;
    const out = await retry(POLICY, { sleep: time.sleep, random: () => 0.5 }, async () => (++tries < 3 ? TRY_AGAIN : 'done'));
    expect(out).toEqual({ exhausted: false, value: 'done' });
    expect(tries).toBe(3);
    expect(time.pauses).toEqual([5, 10]);
    expect(time.waitedMs()).toBe(15);
  });

  it('never tries more than its limit, nor waits longer than its longest wait', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.double({ min: 0, max: 0.999999, noNaN: true }), { minLength: 1, maxLength: 10 }), async (randoms) => {
        const time = simulatedTime();
        let tries = 0;
        let i = 0;
        const out = await retry(POLICY, { sleep: time.sleep, random: () => randoms[i++ % randoms.length]! }, async () => (tries++, TRY_AGAIN));
        expect(out).toEqual({ exhausted: true });
        expect(tries).toBe(POLICY.tries);
        expect(time.pauses).toHaveLength(POLICY.tries - 1);
        expect(time.waitedMs()).toBeLessThanOrEqual(longestWaitMs(POLICY));
      }),
    );
  });

  it('tries again after a retryable error and hands back the last one when the tries run out', async () => {
    const time = simulatedTime();
    const throttled = new Error('throttled');
    const run = { sleep: time.sleep, random: () => 0, retryable: (e: unknown) => e === throttled };
    let tries = 0;
    await expect(retry(POLICY, run, async () => (++tries < 4 ? Promise.reject(throttled) : 'written'))).resolves.toEqual({ exhausted: false, value: 'written' });
    await expect(retry(POLICY, run, () => Promise.reject(throttled))).resolves.toEqual({ exhausted: true, lastError: throttled });
  });

  it('rethrows at once an error that is the answer', async () => {
    const time = simulatedTime();
    let tries = 0;
    const refused = new Error('refused');
    await expect(retry(POLICY, { sleep: time.sleep, random: () => 0, retryable: () => false }, async () => (tries++, Promise.reject(refused)))).rejects.toBe(refused);
    expect(tries).toBe(1);
    expect(time.pauses).toEqual([]);
  });
});

describe('a decision made again at once (retryAtOnce)', () => {
  it('tries up to its limit in a row, never pausing', async () => {
    let tries = 0;
    await expect(retryAtOnce(3, async () => (tries++, TRY_AGAIN))).resolves.toEqual({ exhausted: true });
    expect(tries).toBe(3);
    await expect(retryAtOnce(3, async (n) => (n === 2 ? 'won' : TRY_AGAIN))).resolves.toEqual({ exhausted: false, value: 'won' });
  });
});
