import { ApiError } from '../domain/errors';
import { refusalOf } from '../domain/state-machine';
import type { Payment } from '../domain/payment';
import { TransitionRejected } from '../ports/payments';
import { TRY_AGAIN, withBackoff } from './backoff';
import { askAcquirer, followUpRequest, operationKey, recordRefund, refundableMinor, untilDone, type MoneyDeps } from './money-operations';
import { operationAmount, ownPayment, type AmountOperationRequest } from './payment-operations';
import { reconcileAt } from './record-outcome';

export { refundableMinor };
export type RefundDeps = MoneyDeps;

export interface AcceptedResponse {
  payment_id: string;
  result: 'accepted';
}

/** Options of one merchant request: who asks, and the transaction id a replayed request reuses. */
export interface OperationOptions {
  readonly actor?: string;
  /** A stable transaction id (from the request's Idempotency-Key): a replay finds its first intent. */
  readonly transId?: string;
  /**
   * When the answer is due at the latest (the function's deadline less a margin). Once the intent is
   * recorded the answer is "accepted" whatever follows, so the request stops waiting for the acquirer
   * and the record then, never answering 5xx after the money may have moved; the reconciler finishes.
   */
  readonly answerBy?: Date;
}

/**
 * Refunds all or part of a settled payment; several partial refunds up to the refundable amount.
 * The intent adds the amount to what refunds hold, in one conditional write whose condition is
 * "it still fits and no void, capture or reversal is in flight" (an atomic addition, so concurrent
 * refunds that fit never contend). Then the acquirer is asked with the refund's own idempotency
 * key, and the answer recorded with a write guarded by the intent; a declined refund gives its
 * reservation back, and a full refund ends in `refund`. Whatever is left in flight (crash, timeout,
 * contention past the retries) the reconciler finishes: the answer is "accepted" either way and the
 * outcome follows in the status and the callbacks.
 */
export async function refundPayment(deps: RefundDeps, merchantKey: string, r: Pick<AmountOperationRequest, 'payment_id' | 'amount'>, options: OperationOptions = {}): Promise<AcceptedResponse> {
  const first = await ownPayment(deps.store, merchantKey, r.payment_id);
  const transId = options.transId ?? deps.ids.transId();
  // A replayed request whose refund was made already (even if it refunded the payment in full
  // since): its first answer, before any rule that only holds for a new refund.
  if (options.transId && alreadyMade(first, transId)) return { payment_id: first.paymentId, result: 'accepted' };
  const refusal = refusalOf('refund', first);
  if (refusal) throw new ApiError(refusal);
  const amountMinor = operationAmount(r.amount, first);
  if (!first.authorization) throw new Error(`payment ${first.paymentId} has no authorization to refund`);
  const now = deps.clock.now();
  const refund = { amountMinor, idempotencyKey: operationKey(first.paymentId, 'refund', transId), startedAt: now.toISOString(), actor: options.actor ?? `merchant:${merchantKey}` };

  // The rule is decided by the write; a lost write only means the payment changed (another refund
  // recorded, an operation finished): read again and decide again, with backoff.
  const reserved = await withBackoff<Payment>(async (n) => {
    const payment = n === 1 ? first : await deps.store.findPayment(first.paymentId);
    if (!payment) throw new ApiError('PAYMENT_NOT_FOUND');
    if (options.transId && alreadyMade(payment, transId)) return payment;
    const refusedNow = refusalOf('refund', payment);
    if (refusedNow) throw new ApiError(refusedNow);
    const held = payment.refundHeldMinor ?? payment.refundedMinor ?? 0;
    // What is held by refunds in flight is not left to refund (it comes back only if one is declined).
    if (amountMinor > refundableMinor(payment) - held) throw new ApiError('REFUND_AMOUNT_TOO_BIG');
    if (payment.operation) throw new ApiError('OPERATION_IN_PROGRESS');
    try {
      return await deps.store.transition(
        payment.paymentId,
        { statusIn: ['settled'], operation: 'none', refundHeldAtMost: refundableMinor(payment) - amountMinor, newTransaction: transId },
        {
          // The platform reports a refund as waiting first, then with its outcome (same trans id).
          set: { status: 'settled', updatedAt: refund.startedAt },
          append: [{ transId, type: 'refund', status: 'waiting', amountMinor, at: refund.startedAt, actor: refund.actor }],
          add: { refundHeldMinor: amountMinor },
          refund: { put: [transId, refund] },
          queue: reconcileAt(deps.policy, now),
        },
      );
    } catch (e) {
      if (e instanceof TransitionRejected) return TRY_AGAIN;
      throw e;
    }
  }, undefined, { rethrow: true, clock: deps.clock });
  if (!reserved) throw new ApiError('OPERATION_IN_PROGRESS');
  if (!reserved.refunds?.[transId]) return { payment_id: first.paymentId, result: 'accepted' };

  const finish = (async () => {
    const outcome = await askAcquirer(() => deps.acquirer.refund(followUpRequest(reserved, refund.idempotencyKey, amountMinor)));
    // No answer, or no record yet: the intent is in the reconcile queue; the outcome follows.
    if (outcome) await recordRefund(deps, reserved.paymentId, transId, refund, outcome, undefined, reserved);
  })();
  await untilDone(finish, options.answerBy);
  return { payment_id: reserved.paymentId, result: 'accepted' };
}

/** A replayed request whose refund is already in flight or recorded. */
const alreadyMade = (p: Payment, transId: string): boolean => Boolean(p.refunds?.[transId]) || p.transactions.some((t) => t.transId === transId);
