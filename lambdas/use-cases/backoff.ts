import { ApiError } from '../domain/errors';
import { retry, retryDelayMs, TRY_AGAIN, type RetryPolicy } from '../domain/retry-policy';
import { realSleep, type Clock } from '../ports/clock';

export { TRY_AGAIN } from '../domain/retry-policy';

/**
 * Writes that record what the acquirer said, on the one retry policy (domain/retry-policy.ts):
 * exponential backoff with full jitter, bounded in tries (so a request stays well inside its
 * timeout). Contention on one payment item and throttled writes are retried; when the tries run out
 * the caller leaves the intent to the reconciler instead of failing the request.
 */
export type BackoffPolicy = RetryPolicy;

/** 8 tries, pauses below 20, 40, … 400 ms: at most ~1.5 s of waiting in all. */
export const RECORD_BACKOFF: BackoffPolicy = { tries: 8, firstDelayMs: 20, maxDelayMs: 400, jitter: 'full' };

export type Sleep = (ms: number) => Promise<void>;

/** The pause after try `n` (1-based), before the next. */
export const backoffDelay = (policy: BackoffPolicy, n: number, random: () => number = Math.random): number => retryDelayMs(policy, n, random());

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
  const sleep: Sleep = options.clock?.sleep?.bind(options.clock) ?? realSleep;
  const out = await retry(policy, { sleep, random: Math.random, retryable: (e) => !(e instanceof ApiError) }, attempt);
  if (!out.exhausted) return out.value;
  if (out.lastError !== undefined && options.rethrow) throw out.lastError;
  return undefined;
}
