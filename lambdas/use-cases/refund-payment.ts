import { ApiError } from '../domain/errors';
import { refusalOf, TRANSITIONS } from '../domain/state-machine';
import type { Transaction } from '../domain/payment';
import type { Acquirer } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import { TransitionRejected, type PaymentStore } from '../ports/payments';
import { operationAmount, ownPayment, type AmountOperationRequest } from './payment-operations';

export interface RefundDeps {
  readonly store: PaymentStore;
  readonly acquirer: Acquirer;
  readonly clock: Clock;
  readonly ids: Ids;
}

export interface AcceptedResponse {
  payment_id: string;
  result: 'accepted';
}

/**
 * Refunds all or part of a settled payment; several partial refunds up to the payment amount.
 * The amount is reserved first with a conditional write whose condition is "what was refunded
 * before still leaves room for this one", so racing refunds can never pass the amount. Then the
 * acquirer is asked; a declined refund gives its reservation back. A full refund ends in `refund`.
 */
export async function refundPayment(deps: RefundDeps, merchantKey: string, r: AmountOperationRequest): Promise<AcceptedResponse> {
  const payment = await ownPayment(deps.store, merchantKey, r.payment_id);
  const refusal = refusalOf('refund', payment);
  if (refusal) throw new ApiError(refusal);
  const amountMinor = operationAmount(r.amount, payment);
  const refundedBefore = payment.refundedMinor ?? 0;
  if (amountMinor > payment.order.amountMinor - refundedBefore) throw new ApiError('REFUND_AMOUNT_TOO_BIG');
  if (!payment.authorization) throw new Error(`payment ${payment.paymentId} has no authorization to refund`);

  const transId = deps.ids.transId();
  const start = deps.clock.now().toISOString();
  let reserved;
  try {
    reserved = await deps.store.transition(
      payment.paymentId,
      { statusIn: TRANSITIONS.refund.from, refundedAtMost: payment.order.amountMinor - amountMinor },
      {
        set: { refundedMinor: refundedBefore + amountMinor, updatedAt: start },
        append: [{ transId, type: 'refund', status: 'waiting', amountMinor, at: start }],
      },
    );
  } catch (e) {
    if (!(e instanceof TransitionRejected)) throw e;
    const current = await deps.store.findPayment(payment.paymentId);
    throw new ApiError(current && TRANSITIONS.refund.from.includes(current.status) ? 'REFUND_AMOUNT_TOO_BIG' : 'REFUND_NOT_ALLOWED');
  }
  // The reservation counted from what we read; the write's condition guaranteed it still held.
  void reserved;

  const outcome = await deps.acquirer.refund({
    idempotencyKey: `${payment.paymentId}.refund.${transId}`,
    authorization: payment.authorization,
    amountMinor,
    currency: payment.order.currency,
  });
  const at = deps.clock.now().toISOString();
  const done: Transaction = {
    transId,
    type: 'refund',
    status: outcome.kind === 'approved' ? 'success' : 'fail',
    amountMinor,
    at,
    acquirerRef: outcome.acquirerRef,
    ...(outcome.kind === 'declined' ? { reason: outcome.reason } : {}),
  };
  await settleRefund(deps.store, payment.paymentId, amountMinor, outcome.kind === 'approved', done);
  return { payment_id: payment.paymentId, result: 'accepted' };
}

/**
 * Records the refund's answer. The refunded total is re-read for each try because other refunds
 * may have moved it; each write is guarded so it applies on the state it was computed from.
 */
async function settleRefund(store: PaymentStore, paymentId: string, amountMinor: number, approved: boolean, tx: Transaction): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const current = await store.findPayment(paymentId);
    if (!current) return;
    const refunded = current.refundedMinor ?? 0;
    const nextRefunded = approved ? refunded : refunded - amountMinor;
    // Fully refunded once every reserved amount is confirmed; a declined refund gives it back.
    const status = approved && nextRefunded >= current.order.amountMinor ? 'refund' : current.status === 'refund' && nextRefunded < current.order.amountMinor ? 'settled' : current.status;
    try {
      await store.transition(
        paymentId,
        { refundedIs: refunded, statusIn: [current.status] },
        {
          set: { refundedMinor: nextRefunded, updatedAt: tx.at, status },
          append: [tx],
        },
      );
      return;
    } catch (e) {
      if (!(e instanceof TransitionRejected)) throw e;
    }
  }
  throw new Error(`could not record refund ${tx.transId} of ${paymentId}`);
}
