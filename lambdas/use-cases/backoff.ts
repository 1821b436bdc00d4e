import { ApiError } from '../domain/errors';
import type { Clock } from '../ports/clock';

/**
 * The one retry policy for writes that record what the acquirer said: exponential backoff with full
 * jitter, bounded in tries (so a request stays well inside its timeout). Contention on one payment
 * item and throttled writes are retried; when the tries run out the caller leaves the intent to the
 * reconciler instead of failing the request.
 */
export interface BackoffPolicy {
  readonly tries: number;
  readonly baseMs: number;
  readonly capMs: number;
}

/** 8 tries, at most ~1.5 s of waiting in all. */
export const RECORD_BACKOFF: BackoffPolicy = { tries: 8, baseMs: 10, capMs: 400 };

/** Returned by a try that lost a race and should run again after a pause. */
export const TRY_AGAIN = Symbol('try-again');

export type Sleep = (ms: number) => Promise<void>;
const sleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pause before try `n` (1-based): full jitter on an exponential ceiling. */
export const backoffDelay = (policy: BackoffPolicy, n: number, random: () => number = Math.random): number =>
  Math.floor(random() * Math.min(policy.capMs, policy.baseMs * 2 ** n));

/**
 * Runs `attempt` until it returns a value (not TRY_AGAIN) or the tries run out (undefined). An error
 * thrown by a try counts as a lost try too (a throttled or failed write), except a refusal of the
 * catalog, which is the answer; the last error is rethrown only when `rethrow` is set.
 */
export async function withBackoff<T>(
  attempt: (n: number) => Promise<T | typeof TRY_AGAIN>,
  policy: BackoffPolicy = RECORD_BACKOFF,
  options: { readonly rethrow?: boolean; readonly clock?: Clock } = {},
): Promise<T | undefined> {
  let lastError: unknown;
  for (let n = 1; n <= policy.tries; n++) {
    try {
      const out = await attempt(n);
      if (out !== TRY_AGAIN) return out;
      lastError = undefined;
    } catch (e) {
      if (e instanceof ApiError) throw e;
      lastError = e;
    }
    if (n < policy.tries) await (options.clock?.sleep?.bind(options.clock) ?? sleep)(backoffDelay(policy, n));
  }
  if (lastError !== undefined && options.rethrow) throw lastError;
  return undefined;
}
