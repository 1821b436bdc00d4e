import type { LinkPayment } from '../domain/payment';

/**
 * How the processing page looks for an outcome it does not know yet. Each look is one read of our
 * record of the payment (GET /auth/{token}/status), never a call to the acquirer: the reconciler,
 * or the customer's return from a challenge, records the outcome; the page only notices it.
 * The looks back off (×1.5 from 2 s, at most 30 s apart) and stop after 30 minutes or at the link's
 * expiry, whichever comes first; from then on the customer's "Check again" is the only look. The
 * reconciler asks the acquirer 2 minutes after an attempt, and about a challenge after 20.
 */
export const POLLING = {
  firstDelayMs: 2_000,
  factor: 1.5,
  maxDelayMs: 30_000,
  stopAfterMs: 30 * 60_000,
} as const;

/** When the attempt the page waits for started: in flight, or sent to its challenge or bank page. */
const waitingSince = (payment: LinkPayment): string | undefined => payment.inFlight?.startedAt ?? payment.action?.startedAt;

/** What the page's script and its no-script refresh are told. */
export interface PollPlan {
  /** How much longer the script looks (0: not at all; "Check again" is left). */
  readonly stopAfterMs: number;
  /**
   * Seconds until a browser without scripts loads the check address again, or undefined for no
   * refresh. Only where that check reads our record alone (an attempt in flight): the check of a
   * challenge the customer came back from may ask the acquirer, so it waits for their click.
   */
  readonly refreshAfterSeconds?: number;
}

/**
 * The plan for a processing page rendered at `now`. The refresh's delay is half the attempt's age
 * (2 to 30 s): each reload then comes 1.5 times as late as the one before, the script's backoff,
 * without the browser having to remember anything between pages.
 */
export function pollPlan(payment: LinkPayment, now: Date): PollPlan {
  const since = Date.parse(waitingSince(payment) ?? '') || now.getTime();
  const age = Math.max(0, now.getTime() - since);
  const left = Math.max(0, Math.min(POLLING.stopAfterMs - age, Date.parse(payment.checkout.expiresAt) - now.getTime()));
  if (left <= 0) return { stopAfterMs: 0 };
  const delayMs = Math.min(POLLING.maxDelayMs, Math.max(POLLING.firstDelayMs, age / 2));
  return { stopAfterMs: left, ...(payment.inFlight ? { refreshAfterSeconds: Math.ceil(delayMs / 1000) } : {}) };
}
