import * as z from 'zod/mini';
import { ApiError, invalidRequest } from '../../domain/errors';
import { parseAmount, signedAmountRenderings } from '../../domain/money';
import type { Payment } from '../../domain/payment';
import { RULE, fieldErrorsFrom, text } from '../../domain/validation';
import type { PaymentStore } from '../../ports/payments';

/**
 * The merchant's requests on one payment: void, retry (payment_id) and refund, capture (+ amount):
 * their bodies, the fields their hash signs, the amount read in the payment's currency, and the
 * payment found only for its own merchant.
 */
export const paymentIdSchema = z.object({
  merchant_key: text({ max: 255 }),
  payment_id: text({ max: 255 }),
  hash: text({ max: 255 }),
});
export type PaymentIdRequest = z.infer<typeof paymentIdSchema>;

export const amountOperationSchema = z.object({
  merchant_key: text({ max: 255 }),
  payment_id: text({ max: 255 }),
  amount: z.union([z.string(), z.number()], { error: RULE.invalid }),
  hash: text({ max: 255 }),
});
export type AmountOperationRequest = z.infer<typeof amountOperationSchema>;

export function validatePaymentId(body: unknown): PaymentIdRequest {
  const parsed = paymentIdSchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(fieldErrorsFrom(parsed.error.issues));
  return parsed.data;
}

export function validateAmountOperation(body: unknown): AmountOperationRequest {
  const parsed = amountOperationSchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(fieldErrorsFrom(parsed.error.issues));
  return parsed.data;
}

export const paymentIdHashFields = (r: PaymentIdRequest): string[][] => [[r.payment_id]];

/** payment_id + amount, as signed: a JSON number in its own form or a currency's format of the same value. */
export function amountHashFields(r: AmountOperationRequest): string[][] {
  return signedAmountRenderings(r.amount).map((a) => [r.payment_id, a]);
}

/** The merchant's own payment, or 208001 (also for another merchant's payment). */
export async function ownPayment(store: PaymentStore, merchantKey: string, paymentId: string): Promise<Payment> {
  const payment = await store.findPayment(paymentId);
  if (!payment || payment.merchantKey !== merchantKey) throw new ApiError('PAYMENT_NOT_FOUND');
  return payment;
}

/** An operation amount in the payment's currency, or the 400 envelope for `amount`. */
export function operationAmount(amount: string | number, payment: Payment): number {
  const parsed = parseAmount(amount, payment.order.currency);
  if (typeof parsed === 'string') {
    throw invalidRequest([{ path: 'amount', message: parsed === 'not-positive' ? RULE.positive : parsed === 'blank' ? RULE.blank : RULE.invalid }]);
  }
  return parsed.amountMinor;
}

/** The answer to a refund and a retry: accepted; the outcome follows in the status and the callbacks. */
export interface AcceptedResponse {
  payment_id: string;
  result: 'accepted';
}

/** Options of one merchant request: who asks, the transaction id a replayed request reuses, when the answer is due. */
export interface OperationOptions {
  readonly actor?: string;
  /** A stable transaction id (from the request's Idempotency-Key): a replay finds its first intent. */
  readonly transId?: string;
  /** The function's deadline less a margin: the answer does not wait for the acquirer past it. */
  readonly answerBy?: Date;
}
