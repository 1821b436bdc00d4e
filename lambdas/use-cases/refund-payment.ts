import { ApiError } from '../domain/errors';
import { refusalOf } from '../domain/state-machine';
import type { Payment, Transaction } from '../domain/payment';
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

/** What can be refunded at most: the captured amount of a DMS payment, else the payment amount. */
export const refundableMinor = (p: Pick<Payment, 'capturedMinor' | 'order'>): number => p.capturedMinor ?? p.order.amountMinor;

/**
 * A reservation loses a race only when another refund moved the refunded total first; after at
 * most as many losses as refunds that fit, what is left is too small. This bounds the tries.
 */
const RESERVE_TRIES = 10;

/**
 * Refunds all or part of a settled payment; several partial refunds up to the refundable amount.
 * The amount is reserved first with a conditional write guarded by the refunded total it was
 * computed from, so racing refunds can never pass the amount: a loser reads again and either fits
 * in what is left or is refused. Then the acquirer is asked; a declined refund gives its
 * reservation back. A full refund ends in `refund`.
 */
export async function refundPayment(deps: RefundDeps, merchantKey: string, r: Pick<AmountOperationRequest, 'payment_id' | 'amount'>): Promise<AcceptedResponse> {
  let payment = await ownPayment(deps.store, merchantKey, r.payment_id);
  const refusal = refusalOf('refund', payment);
  if (refusal) throw new ApiError(refusal);
  const amountMinor = operationAmount(r.amount, payment);
  if (!payment.authorization) throw new Error(`payment ${payment.paymentId} has no authorization to refund`);
  const authorization = payment.authorization;

  const transId = deps.ids.transId();
  const start = deps.clock.now().toISOString();
  for (let attempt = 1; ; attempt++) {
    const refusedNow = refusalOf('refund', payment);
    if (refusedNow) throw new ApiError(refusedNow);
    const refundedBefore = payment.refundedMinor ?? 0;
    if (amountMinor > refundableMinor(payment) - refundedBefore) throw new ApiError('REFUND_AMOUNT_TOO_BIG');
    try {
      await deps.store.transition(
        payment.paymentId,
        { statusIn: [payment.status], refundedIs: refundedBefore },
        {
          set: { status: payment.status, refundedMinor: refundedBefore + amountMinor, updatedAt: start },
          append: [{ transId, type: 'refund', status: 'waiting', amountMinor, at: start }],
        },
      );
      break;
    } catch (e) {
      if (!(e instanceof TransitionRejected)) throw e;
      if (attempt >= RESERVE_TRIES) throw new Error(`could not reserve refund ${transId} of ${payment.paymentId}`);
      const current = await deps.store.findPayment(payment.paymentId);
      if (!current) throw new ApiError('PAYMENT_NOT_FOUND');
      payment = current;
    }
  }

  const outcome = await deps.acquirer.refund({
    idempotencyKey: `${payment.paymentId}.refund.${transId}`,
    authorization,
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
    const full = refundableMinor(current);
    const status = approved && nextRefunded >= full ? 'refund' : current.status === 'refund' && nextRefunded < full ? 'settled' : current.status;
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
