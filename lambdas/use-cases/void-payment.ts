import { ApiError } from '../domain/errors';
import { protocolDate, type Payment, type PendingOperation } from '../domain/payment';
import { refusalOf, TRANSITIONS } from '../domain/state-machine';
import { voidBlockedReason } from '../domain/void-window';
import { TransitionRejected } from '../ports/payments';
import { completeOperation, operationKey, startOperation, type MoneyDeps } from './money-operations';
import { ownPayment, type PaymentIdRequest } from './payment-operations';
import type { OperationOptions } from './refund-payment';

export type VoidDeps = MoneyDeps;

export interface VoidResponse {
  status: 'SUCCESS' | 'FAIL';
  payment_status: 'void' | 'settled';
  payment_id: string;
  date: string;
  reason?: string;
  order: { number: string; amount: string; currency: string; description: string };
}

/** The answer while the acquirer's answer is not known yet; the outcome follows in status and callbacks. */
export const VOID_IN_PROGRESS_REASON = 'The void is being processed; its outcome follows in the payment status and the callback.';

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
 * nothing refunded or being refunded. The intent is one conditional write whose condition is the
 * rule itself (settled, inside the window, nothing refunded, nothing else in flight), so a racing
 * refund or void cannot slip in; then the acquirer, then the answer recorded under that intent.
 * Concurrent voids: exactly one reaches the acquirer.
 */
export async function voidPayment(deps: VoidDeps, merchantKey: string, r: Pick<PaymentIdRequest, 'payment_id'>, options: OperationOptions = {}): Promise<VoidResponse> {
  const payment = await ownPayment(deps.store, merchantKey, r.payment_id);
  const now = deps.clock.now();
  if (options.transId) {
    const replayed = replayOf(payment, options.transId, now);
    if (replayed) return replayed;
  }
  const refusal = refusalOf('void', payment);
  if (refusal) throw new ApiError(refusal);
  const blocked = voidBlockedReason(payment, now);
  if (blocked) return response(payment, 'FAIL', now, blocked);
  // Another void already on its way answers as a void that won does: this one voids nothing.
  if (payment.operation?.kind === 'void') throw new ApiError('VOID_NOT_SETTLED');
  if (payment.operation || Object.keys(payment.refunds ?? {}).length) throw new ApiError('OPERATION_IN_PROGRESS');
  if (!payment.authorization) throw new Error(`payment ${payment.paymentId} has no authorization to void`);

  const transId = options.transId ?? deps.ids.transId();
  const op: PendingOperation = {
    kind: 'void',
    transId,
    amountMinor: payment.capturedMinor ?? payment.order.amountMinor,
    idempotencyKey: operationKey(payment.paymentId, 'void', transId),
    startedAt: now.toISOString(),
    actor: options.actor ?? `merchant:${merchantKey}`,
  };
  let started: Payment;
  try {
    started = await startOperation(deps, payment, op, { statusIn: TRANSITIONS.void.from, voidableAt: now, refundHeldAtMost: 0 });
  } catch (e) {
    if (!(e instanceof TransitionRejected)) throw e;
    // Another void or a refund got there first: the rule answers on what is there now.
    const current = await deps.store.findPayment(payment.paymentId);
    if (current && options.transId) {
      const replayed = replayOf(current, options.transId, now);
      if (replayed) return replayed;
    }
    if (!current || refusalOf('void', current)) throw new ApiError('VOID_NOT_SETTLED');
    const reason = voidBlockedReason(current, now);
    if (reason) return response(current, 'FAIL', now, reason);
    throw new ApiError(current.operation?.kind === 'void' ? 'VOID_NOT_SETTLED' : 'OPERATION_IN_PROGRESS');
  }
  const { outcome } = await completeOperation(deps, started, op, options.answerBy);
  if (!outcome) return response(started, 'FAIL', now, VOID_IN_PROGRESS_REASON);
  // The acquirer's answer is the answer, recorded or (after the retries) left to the reconciler.
  return outcome.kind === 'approved' ? response(started, 'SUCCESS', now) : response(started, 'FAIL', now, outcome.reason);
}

/** The first answer to a replayed request: from its recorded transaction, or "in progress". */
function replayOf(p: Payment, transId: string, now: Date): VoidResponse | undefined {
  const tx = p.transactions.find((t) => t.transId === transId);
  if (tx) return tx.status === 'success' ? response(p, 'SUCCESS', now) : response(p, 'FAIL', now, tx.reason);
  if (p.operation?.transId === transId) return response(p, 'FAIL', now, VOID_IN_PROGRESS_REASON);
  return undefined;
}
