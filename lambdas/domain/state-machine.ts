import type { ErrorName } from './errors';
import { PAYMENT_STATUSES, type Payment, type PaymentStatus } from './payment/model';

/**
 * Which operation may act on a payment in which status. Use cases check this before any I/O, and
 * the transitions (domain/payment/) take `from` as their guard's statuses, so the table is the
 * rule in both places.
 */
export const OPERATIONS = ['pay', 'capture', 'release', 'void', 'refund', 'retry', 'chargeback'] as const;
export type Operation = (typeof OPERATIONS)[number];

export const TRANSITIONS: Readonly<Record<Operation, { readonly from: readonly PaymentStatus[]; readonly refusal: ErrorName }>> = {
  /** A customer attempt on the checkout link. */
  pay: { from: ['prepare', 'decline'], refusal: 'PAYMENT_NOT_FOUND' },
  /** DMS: capture an authorization. */
  capture: { from: ['pending'], refusal: 'CAPTURE_NOT_PENDING' },
  /** DMS: give an authorization back (status reversal). */
  release: { from: ['pending'], refusal: 'CAPTURE_NOT_PENDING' },
  void: { from: ['settled'], refusal: 'VOID_NOT_SETTLED' },
  refund: { from: ['settled'], refusal: 'REFUND_NOT_ALLOWED' },
  /** A merchant-initiated payment after a soft decline. */
  retry: { from: ['decline'], refusal: 'RETRY_NOT_ALLOWED' },
  /**
   * The acquirer's chargeback (not the merchant's operation): of captured money, once or several
   * times partially; a refunded-in-full, voided or uncaptured payment has nothing left to charge back.
   */
  chargeback: { from: ['settled', 'chargeback'], refusal: 'CHARGEBACK_NOT_SETTLED' },
};

/** The refusal for an operation on a payment, or undefined when it is allowed. */
export function refusalOf(operation: Operation, payment: Pick<Payment, 'status' | 'softDecline' | 'recurringChainToken' | 'inFlight'>): ErrorName | undefined {
  const rule = TRANSITIONS[operation];
  if (!rule.from.includes(payment.status)) return rule.refusal;
  if (operation === 'retry' && !(payment.softDecline && payment.recurringChainToken && !payment.inFlight)) return rule.refusal;
  return undefined;
}

/** Every status × operation, for documentation and tests. */
export const transitionTable = (): { status: PaymentStatus; operation: Operation; allowed: boolean }[] =>
  PAYMENT_STATUSES.flatMap((status) => OPERATIONS.map((operation) => ({ status, operation, allowed: TRANSITIONS[operation].from.includes(status) })));
