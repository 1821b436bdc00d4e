import { ApiError } from '../domain/errors';
import type { Payment } from '../domain/payment';
import type { Clock } from '../ports/clock';
import type { PaymentStore } from '../ports/payments';

/** Which payment a merchant asks about: one by its id, or the latest of an order number. */
export type PaymentLookup = { readonly paymentId: string } | { readonly orderNumber: string };

export interface PaymentStatusDeps {
  readonly store: PaymentStore;
  readonly clock: Clock;
}

/** The merchant's payment, as read at `now` (protocol/merchant/status.ts answers its status then). */
export async function paymentStatus(deps: PaymentStatusDeps, merchantKey: string, lookup: PaymentLookup): Promise<{ payment: Payment; now: Date }> {
  const payment = 'paymentId' in lookup
    ? await deps.store.findPayment(lookup.paymentId)
    : await deps.store.findLatestPaymentByOrder(merchantKey, lookup.orderNumber);
  // Another merchant's payment answers exactly like a missing one.
  if (!payment || payment.merchantKey !== merchantKey) throw new ApiError('PAYMENT_NOT_FOUND');
  return { payment, now: deps.clock.now() };
}
