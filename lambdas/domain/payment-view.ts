/**
 * A payment's status and reason as everyone reads them: the merchant's status route, the portal's
 * payment detail and search, the CSV export, and the check of a callback resend against the
 * payment's final state. What is stored is the last recorded state; two readings also depend on
 * the time, because no write marks the moment they change:
 * - a link nobody paid (and no attempt is on its way) reads `decline`, with SESSION_EXPIRED_REASON,
 *   from its expiry on;
 * - a declined attempt after which the customer may still pay on the link reads `prepare`
 *   (attempts.ts): `decline` is only ever the final outcome, as its callback is.
 * Pure: the caller passes the time.
 */
import { reportedStatus } from './attempts';
import type { Payment, PaymentStatus } from './payment';

export interface PaymentReading {
  readonly status: PaymentStatus;
  readonly reason?: string;
}

export const SESSION_EXPIRED_REASON = 'Checkout session expired without a payment.';

/**
 * An unpaid link past its expiry. An attempt still waiting for the acquirer's answer keeps it
 * `prepare`: that answer may yet be an approval (the reconciler records it).
 */
const expiredUnpaid = (p: Payment, now: Date): boolean =>
  p.status === 'prepare' && p.transactions.length === 0 && p.inFlight === undefined && p.checkout !== undefined && Date.parse(p.checkout.expiresAt) <= now.getTime();

/** The payment's status (and reason) as the merchant, the operator and the export read it at `now`. */
export function paymentReading(p: Payment, now: Date): PaymentReading {
  if (expiredUnpaid(p, now)) return { status: 'decline', reason: SESSION_EXPIRED_REASON };
  return reportedStatus(p, now);
}

/**
 * The stored statuses a payment read as `status` may have: what a search keeps of the payments its
 * index names, by their stored status, before it keeps those that read as asked. `decline` and
 * `prepare` each take the other's stored payments too (the two readings above).
 */
export function storedStatusesReadingAs(status: PaymentStatus): readonly PaymentStatus[] {
  if (status === 'decline') return ['decline', 'prepare'];
  if (status === 'prepare') return ['prepare', 'decline'];
  return [status];
}

/** Whether a payment stored with `status` always reads as it: its stored status alone then answers a filter on it. */
export const alwaysReadsAsStored = (status: PaymentStatus): boolean => storedStatusesReadingAs(status).length === 1;
