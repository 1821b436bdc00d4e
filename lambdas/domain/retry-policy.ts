/**
 * The one retry policy: exponential backoff with jitter and explicit limits (Stripe's shape). Every
 * loop that tries again after a lost race, a throttled write or a failed delivery takes its pauses
 * from here and says its limits in one place. Pure: the caller hands over the randomness and the
 * sleep (a test's sleep moves a clock instead of waiting).
 */
export interface RetryPolicy {
  /** Tries in all, the first included: never unbounded. */
  readonly tries: number;
  /** The ceiling of the pause before the first retry; it doubles with each retry… */
  readonly firstDelayMs: number;
  /** …up to this. */
  readonly maxDelayMs: number;
  /**
   * 'full': anywhere below the ceiling (contention: racers spread out the most); 'equal': at least
   * half the ceiling (deliveries: a receiver back from an outage is not hit by every sender at once,
   * yet no retry comes sooner than half its nominal delay).
   */
  readonly jitter: 'full' | 'equal';
}

/** The nominal pause before retry `retry` (1 = the first retry): doubling from firstDelayMs, capped. */
export function nominalDelayMs(policy: Pick<RetryPolicy, 'firstDelayMs' | 'maxDelayMs'>, retry: number): number {
  if (!Number.isInteger(retry) || retry < 1) throw new Error(`retry must be a whole number ≥ 1, got ${retry}`);
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** Math.min(retry - 1, 30));
}

/** The pause before retry `retry`, given `random` in [0, 1) (clamped): whole milliseconds. */
export function retryDelayMs(policy: Omit<RetryPolicy, 'tries'>, retry: number, random: number): number {
  const nominal = nominalDelayMs(policy, retry);
  const r = Math.min(Math.max(random, 0), 1);
  return policy.jitter === 'full' ? Math.floor(nominal * r) : Math.round(nominal / 2 + (nominal / 2) * r);
}

/** The most a run of the policy can wait in all (every pause at its ceiling): what its limits promise a caller's deadline. */
export function longestWaitMs(policy: RetryPolicy): number {
  let total = 0;
  for (let retry = 1; retry < policy.tries; retry++) total += nominalDelayMs(policy, retry);
  return total;
}

/** Returned by a try that lost a race and should run again after a pause. */
export const TRY_AGAIN = Symbol('try-again');

export interface RetryRun {
  readonly sleep: (ms: number) => Promise<void>;
  /** In [0, 1): the jitter. */
  readonly random: () => number;
  /** Whether a thrown error counts as a lost try (tried again) rather than the answer (rethrown at once). Default: none is. */
  readonly retryable?: (error: unknown) => boolean;
}

/**
 * Runs `attempt` (given its 1-based try number) until it returns something other than TRY_AGAIN,
 * pausing by the policy between tries. When the tries run out: `{ exhausted: true }`, with the last
 * retryable error if the last try threw one.
 */
export async function retry<T>(
  policy: RetryPolicy,
  run: RetryRun,
  attempt: (tryNumber: number) => Promise<T | typeof TRY_AGAIN>,
): Promise<{ readonly exhausted: false; readonly value: T } | { readonly exhausted: true; readonly lastError?: unknown }> {
  let lastError: unknown;
  let failed = false;
  for (let n = 1; n <= policy.tries; n++) {
    try {
      const out = await attempt(n);
      if (out !== TRY_AGAIN) return { exhausted: false, value: out };
      failed = false;
    } catch (e) {
      if (!run.retryable?.(e)) throw e;
      lastError = e;
      failed = true;
    }
    if (n < policy.tries && nominalDelayMs(policy, n) > 0) await run.sleep(retryDelayMs(policy, n, run.random()));
  }
  return failed ? { exhausted: true, lastError } : { exhausted: true };
}

const NO_PAUSE: RetryRun = { sleep: () => Promise.resolve(), random: () => 0 };

/**
 * Up to `tries` tries in a row without a pause: for a decision made again on a fresh read, which
 * shows what the other writer did, so there is nothing to wait for.
 */
export function retryAtOnce<T>(tries: number, attempt: (tryNumber: number) => Promise<T | typeof TRY_AGAIN>, retryable?: RetryRun['retryable']) {
  return retry({ tries, firstDelayMs: 0, maxDelayMs: 0, jitter: 'full' }, retryable ? { ...NO_PAUSE, retryable } : NO_PAUSE, attempt);
}
