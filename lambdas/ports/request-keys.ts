import type { RememberedAnswer } from '../domain/request-key';

/**
 * What a request finds when it claims its Idempotency-Key:
 * - `run`: it runs the operation, holding the key for the lease; `rerun` when an earlier run under
 *   this key ended without an answer (it crashed, timed out, or answered "try again"), so the
 *   operation may already be under way and the use case must look for it first;
 * - `answered`: the first run's answer, to be given again whatever happened since;
 * - `in-progress`: another run holds the key right now;
 * - `different`: the key was first used with another body.
 */
export type RequestKeyClaim =
  | { readonly kind: 'run'; readonly lease: string; readonly rerun: boolean }
  | { readonly kind: 'answered'; readonly answer: RememberedAnswer }
  | { readonly kind: 'in-progress' }
  | { readonly kind: 'different' };

/** Remembers, for 24 hours, which body an Idempotency-Key was first used with and what it answered. */
export interface RequestKeys {
  /** Claims the key for this body's run under `lease` (a unique token), or says what holds it. */
  claim(id: string, fingerprint: string, lease: string, now: Date): Promise<RequestKeyClaim>;
  /**
   * Keeps the answer on the key, unless one is kept already (a run that took over a lapsed claim
   * answered first): the answer kept, which is the one every replay gets.
   */
  remember(id: string, answer: RememberedAnswer, now: Date): Promise<RememberedAnswer>;
  /** Gives the claim up without an answer (a failure or "try again"): the next replay runs at once. */
  release(id: string, lease: string): Promise<void>;
  /**
   * For reads (payment status): records the key with this body's fingerprint, or finds it recorded:
   * `same` for the first body, `different` for another one. Nothing is held and nothing answered.
   */
  check(id: string, fingerprint: string, now: Date): Promise<'same' | 'different'>;
}
