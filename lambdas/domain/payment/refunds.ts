import type { Payment } from './model';

/** What can be refunded at most: the captured amount of a DMS payment, else the payment amount. */
export const refundableMinor = (p: Pick<Payment, 'capturedMinor' | 'order'>): number => p.capturedMinor ?? p.order.amountMinor;

/** Refunded plus held by refunds in flight: what a new refund must fit beside. */
export const refundHeldMinor = (p: Pick<Payment, 'refundHeldMinor' | 'refundedMinor'>): number => p.refundHeldMinor ?? p.refundedMinor ?? 0;

/** What a new refund may take at most now (a refund in flight holds its amount until it is answered). */
export const refundLeftMinor = (p: Pick<Payment, 'capturedMinor' | 'order' | 'refundHeldMinor' | 'refundedMinor'>): number => refundableMinor(p) - refundHeldMinor(p);

/** Whether an approved refund of this amount leaves nothing refundable: the payment is then `refund`. */
export const refundsInFull = (p: Pick<Payment, 'capturedMinor' | 'order' | 'refundedMinor'>, amountMinor: number): boolean =>
  (p.refundedMinor ?? 0) + amountMinor >= refundableMinor(p);
