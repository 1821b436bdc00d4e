import { ApiError } from '../domain/errors';
import { protocolDate, type Payment } from '../domain/payment';
import { refusalOf, TRANSITIONS } from '../domain/state-machine';
import { voidBlockedReason } from '../domain/void-window';
import type { Acquirer } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import { TransitionRejected, type PaymentStore } from '../ports/payments';
import { ownPayment, type PaymentIdRequest } from './payment-operations';

export interface VoidDeps {
  readonly store: PaymentStore;
  readonly acquirer: Acquirer;
  readonly clock: Clock;
  readonly ids: Ids;
}

export interface VoidResponse {
  status: 'SUCCESS' | 'FAIL';
  payment_status: 'void' | 'settled';
  payment_id: string;
  date: string;
  reason?: string;
  order: { number: string; amount: string; currency: string; description: string };
}

const response = (p: Payment, status: VoidResponse['status'], at: Date, reason?: string): VoidResponse => ({
  status,
  payment_status: status === 'SUCCESS' ? 'void' : 'settled',
  payment_id: p.paymentId,
  date: protocolDate(at.toISOString()),
  ...(reason ? { reason } : {}),
  order: { number: p.order.number, amount: p.order.amount, currency: p.order.currency, description: p.order.description },
});

/**
 * Voids a settled payment inside its window (the day of the payment, before 21:00 UTC+3) that has
 * no refunds. One read, the acquirer (idempotent per payment), then one conditional write whose
 * condition is the rule itself: still settled, still inside the window, nothing refunded.
 * Concurrent voids: exactly one wins.
 */
export async function voidPayment(deps: VoidDeps, merchantKey: string, r: Pick<PaymentIdRequest, 'payment_id'>): Promise<VoidResponse> {
  const payment = await ownPayment(deps.store, merchantKey, r.payment_id);
  const refusal = refusalOf('void', payment);
  if (refusal) throw new ApiError(refusal);
  const now = deps.clock.now();
  const blocked = voidBlockedReason(payment, now);
  if (blocked) return response(payment, 'FAIL', now, blocked);
  if (!payment.authorization) throw new Error(`payment ${payment.paymentId} has no authorization to void`);

  const outcome = await deps.acquirer.void({
    idempotencyKey: `${payment.paymentId}.void`,
    authorization: payment.authorization,
    amountMinor: payment.order.amountMinor,
    currency: payment.order.currency,
  });
  const at = now.toISOString();
  const transaction = {
    transId: deps.ids.transId(),
    type: 'void' as const,
    status: outcome.kind === 'approved' ? ('success' as const) : ('fail' as const),
    amountMinor: payment.order.amountMinor,
    at,
    acquirerRef: outcome.acquirerRef,
    ...(outcome.kind === 'declined' ? { reason: outcome.reason } : {}),
  };
  try {
    const next = await deps.store.transition(
      payment.paymentId,
      { statusIn: TRANSITIONS.void.from, voidableAt: now, refundedIs: 0 },
      outcome.kind === 'approved'
        ? { set: { status: 'void', updatedAt: at }, append: [transaction] }
        : { set: { status: payment.status, updatedAt: at }, append: [transaction] },
    );
    return outcome.kind === 'approved' ? response(next, 'SUCCESS', now) : response(next, 'FAIL', now, outcome.reason);
  } catch (e) {
    if (!(e instanceof TransitionRejected)) throw e;
    // Another void won, or a refund was reserved meanwhile: the rule answers.
    const current = await deps.store.findPayment(payment.paymentId);
    const reason = current && !refusalOf('void', current) ? voidBlockedReason(current, now) : undefined;
    if (current && reason) return response(current, 'FAIL', now, reason);
    throw new ApiError('VOID_NOT_SETTLED');
  }
}
