import * as z from 'zod/mini';
import { invalidRequest } from '../../domain/errors';
import { formatMinor } from '../../domain/money';
import { protocolDate, type Payment } from '../../domain/payment';
import { paymentReading } from '../../domain/payment-view';
import { RULE, fieldErrorsFrom, text } from '../../domain/validation';
import type { PaymentLookup } from '../../use-cases/payment-status';

/** POST /api/v1/payment/status: by payment_id or by order_id (protocol.md §3); exactly one of the two. */
export const paymentStatusSchema = z.object({
  merchant_key: text({ max: 255 }),
  payment_id: z.optional(text({ max: 255 })),
  order_id: z.optional(text({ max: 255 })),
  hash: text({ max: 255 }),
});
export type PaymentStatusRequest = z.infer<typeof paymentStatusSchema>;

export function validatePaymentStatus(body: unknown): PaymentStatusRequest {
  const parsed = paymentStatusSchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(fieldErrorsFrom(parsed.error.issues));
  const r = parsed.data;
  if (r.payment_id === undefined && r.order_id === undefined) {
    throw invalidRequest([{ path: 'payment_id', message: RULE.blank }]);
  }
  return r;
}

/** payment_id when given, else order_id (protocol.md §1). */
export const paymentStatusHashFields = (r: PaymentStatusRequest): string[][] => [[r.payment_id ?? r.order_id ?? '']];

/** The payment a valid request asks about: by its id when given, else the latest of the order number. */
export const paymentLookupOf = (r: PaymentStatusRequest): PaymentLookup =>
  r.payment_id !== undefined ? { paymentId: r.payment_id } : { orderNumber: r.order_id ?? '' };

export interface PaymentStatusResponse {
  payment_id: string;
  date: string;
  status: string;
  reason?: string;
  order: { number: string; amount: string; currency: string; description: string };
  /** Always present; `name` and `email` when known (the session's, or what the customer typed on the page). */
  customer: { name?: string; email?: string };
  recurring_token?: string;
  recurring_init_trans_id?: string;
  schedule_id?: string;
  shedule_id?: string;
  card_token?: string;
  /** The wallet that paid (`applepay`, `googlepay`), only for a wallet payment, as the platform's status answers it. */
  digital_wallet?: string;
  /** Platform extension: how much of the payment has been refunded so far. */
  refunded_amount?: string;
  /** Platform extension: how much of the payment was charged back (status `chargeback`, full or partial). */
  chargeback_amount?: string;
}

/**
 * What a merchant sees of a payment: its status and reason as everyone reads them
 * (domain/payment-view.ts), so the portal, its search and the CSV export say the same.
 */
export function toStatusResponse(p: Payment, now: Date): PaymentStatusResponse {
  const { status, reason } = paymentReading(p, now);
  return {
    payment_id: p.paymentId,
    date: protocolDate(p.createdAt),
    status,
    ...(reason ? { reason } : {}),
    order: { number: p.order.number, amount: p.order.amount, currency: p.order.currency, description: p.order.description },
    customer: { ...(p.customer.name ? { name: p.customer.name } : {}), ...(p.customer.email ? { email: p.customer.email } : {}) },
    ...(p.recurringToken ? { recurring_token: p.recurringToken, recurring_init_trans_id: p.recurringInitTransId } : {}),
    ...(p.scheduleId ? { schedule_id: p.scheduleId, shedule_id: p.scheduleId } : {}),
    ...(p.cardToken ? { card_token: p.cardToken } : {}),
    ...(p.wallet ? { digital_wallet: p.wallet.wallet } : {}),
    ...(p.refundedMinor ? { refunded_amount: formatMinor(p.refundedMinor, p.order.currency) } : {}),
    ...(p.chargedBackMinor ? { chargeback_amount: formatMinor(p.chargedBackMinor, p.order.currency) } : {}),
  };
}

export { SESSION_EXPIRED_REASON } from '../../domain/payment-view';
