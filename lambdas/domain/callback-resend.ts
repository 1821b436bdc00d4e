/**
 * Which callback an operator may send again, and what it would tell the merchant. A resend repeats
 * a message the merchant was due: never one it was rightly not sent (a ledger-only entry, a held
 * decline a later attempt superseded or that is not final yet, a callback skipped in its turn),
 * since a receiver takes whatever arrives last as the order's state. Pure: the caller passes the time.
 */
import { awaitsAnotherAttempt, heldDeclineIndex } from './attempts';
import { formatMinor } from './money';
import type { Payment, PaymentStatus } from './payment';
import { paymentReading } from './payment-view';

/** A callback's delivery state as the log shows it (ports/callbacks.ts, plus not-sent: no record yet). */
export type ResendableState = 'pending' | 'delivered' | 'dead' | 'skipped' | 'not-sent';

export const NOT_RESENDABLE = {
  internal: 'Recorded for the ledger only: the merchant is never sent this callback (its reversal is reported instead).',
  superseded: 'Superseded: the customer tried again on the link after this decline, so it was never the outcome. The merchant is never sent it.',
  notFinal: 'Not final: the customer may still pay on the link. This decline is sent once it is final.',
  finalHeld: 'Skipped in its turn while the customer could still pay; the link has closed since, and that closure sends it, not a resend.',
  skipped: 'Skipped: it was never sent, and a resend would be the first the merchant hears of it.',
  waiting: 'This callback is already waiting to be sent.',
} as const;

/**
 * Why the callback of the transaction at `index` cannot be sent again now, or undefined when it
 * can. The transaction's own nature comes first (it holds whatever the record says), then the
 * record's state.
 */
export function resendRefusal(p: Payment, index: number, state: ResendableState, now: Date): string | undefined {
  const tx = p.transactions[index];
  if (!tx) return undefined;
  if (tx.internal) return NOT_RESENDABLE.internal;
  if (tx.held) {
    if (heldDeclineIndex(p) !== index) return NOT_RESENDABLE.superseded;
    if (awaitsAnotherAttempt(p, now)) return NOT_RESENDABLE.notFinal;
    if (state === 'skipped') return NOT_RESENDABLE.finalHeld;
  }
  if (state === 'skipped') return NOT_RESENDABLE.skipped;
  if (state === 'pending' || state === 'not-sent') return NOT_RESENDABLE.waiting;
  return undefined;
}

/** What a callback tells the merchant, as a resend's confirmation names it. */
export interface CallbackMessage {
  readonly type: string;
  readonly status: string;
  /** The transaction's own amount (a partial capture or refund), in decimals. */
  readonly amount: string;
  readonly currency: string;
  /** The order's status the callback carries (`order_status`: the payment's right after the transaction). */
  readonly orderStatus: PaymentStatus;
  /** The payment's status now, as the merchant's status route reads it. */
  readonly paymentStatus: PaymentStatus;
  /**
   * Set when the callback's order status is not the payment's now: the merchant would take an
   * older state (a sale's `settled` after a refund, a decline after a payment) as the latest.
   */
  readonly contradiction?: string;
}

export function callbackMessage(p: Payment, index: number, now: Date): CallbackMessage | undefined {
  const tx = p.transactions[index];
  if (!tx) return undefined;
  // As callbackFields sends it: a transaction from before the stamp reports the payment's status.
  const orderStatus = tx.orderStatus ?? p.status;
  const reading = paymentReading(p, now);
  return {
    type: tx.type,
    status: tx.status,
    amount: formatMinor(tx.amountMinor, p.order.currency),
    currency: p.order.currency,
    orderStatus,
    paymentStatus: reading.status,
    ...(orderStatus !== reading.status
      ? { contradiction: `It tells the merchant the order is ${orderStatus}, but the payment is ${reading.status}${reading.reason ? ` (${reading.reason})` : ''} now: the merchant may take it as the latest state.` }
      : {}),
  };
}
