import { ApiError } from '../domain/errors';
import { protocolDate, type Payment, type PendingOperation } from '../domain/payment';
import { refusalOf, TRANSITIONS } from '../domain/state-machine';
import { TransitionRejected } from '../ports/payments';
import { completeOperation, operationKey, startOperation, type MoneyDeps } from './money-operations';

export type CaptureDeps = MoneyDeps;

export interface CaptureResponse {
  payment_id: string;
  status: string;
  trans_status: 'SUCCESS' | 'FAIL';
  date: string;
  reason?: string;
}

export type CaptureResult =
  | { readonly kind: 'captured'; readonly payment: Payment }
  | { readonly kind: 'declined'; readonly payment: Payment; readonly reason: string }
  /** Sent, but the acquirer's answer is not known yet: the reconciler finishes it. */
  | { readonly kind: 'in-progress'; readonly payment: Payment }
  /** Someone else (the job, an operator, another request) captured or released it first. */
  | { readonly kind: 'taken'; readonly payment: Payment };

export const CAPTURE_IN_PROGRESS_REASON = 'The capture is being processed; its outcome follows in the payment status and the callback.';

/**
 * Captures an authorization, fully or once partially (amount ≤ authorized). Whoever asks — the
 * API, an operator, the capture job — records the intent with a conditional write first (pending,
 * nothing else in flight), so two at the same moment can never both capture; the acquirer's answer
 * is recorded with a second write guarded by that intent. A declined capture leaves it pending.
 */
export async function capture(deps: CaptureDeps, payment: Payment, amountMinor: number, actor: string, transId?: string, answerBy?: Date): Promise<CaptureResult> {
  if (transId) {
    const replayed = replayOf(payment, transId);
    if (replayed) return replayed;
  }
  const refusal = refusalOf('capture', payment);
  if (refusal) throw new ApiError(refusal);
  if (amountMinor > payment.order.amountMinor) throw new ApiError('CAPTURE_AMOUNT_TOO_BIG');
  if (amountMinor <= 0) throw new ApiError('CAPTURE_AMOUNT_TOO_BIG');
  if (!payment.authorization) throw new Error(`payment ${payment.paymentId} has no authorization`);
  const id = transId ?? deps.ids.transId();
  const op: PendingOperation = { kind: 'capture', transId: id, amountMinor, idempotencyKey: operationKey(payment.paymentId, 'capture', id), startedAt: deps.clock.now().toISOString(), actor };
  return runExclusive(deps, payment, op, TRANSITIONS.capture.from, transId, answerBy);
}

export const RELEASE_REASON = 'Authorization released.';

/**
 * Gives an authorization back (status reversal) at the acquirer: by an operator, or by the job when
 * it expires. With `answerBy` it stops waiting then (in progress; the reconciler finishes it).
 */
export async function release(deps: CaptureDeps, payment: Payment, actor: string, reason = RELEASE_REASON, answerBy?: Date): Promise<CaptureResult> {
  const refusal = refusalOf('release', payment);
  if (refusal) throw new ApiError(refusal);
  const id = deps.ids.transId();
  const op: PendingOperation = {
    kind: 'reversal',
    transId: id,
    amountMinor: payment.order.amountMinor,
    idempotencyKey: operationKey(payment.paymentId, 'reversal', id),
    startedAt: deps.clock.now().toISOString(),
    actor,
    reason,
  };
  return runExclusive(deps, payment, op, TRANSITIONS.release.from, undefined, answerBy);
}

async function runExclusive(deps: CaptureDeps, payment: Payment, op: PendingOperation, from: readonly Payment['status'][], replayId?: string, answerBy?: Date): Promise<CaptureResult> {
  let started: Payment;
  try {
    started = await startOperation(deps, payment, op, { statusIn: from });
  } catch (e) {
    if (!(e instanceof TransitionRejected)) throw e;
    const current = (await deps.store.findPayment(payment.paymentId)) ?? payment;
    return (replayId && replayOf(current, replayId)) || { kind: 'taken', payment: current };
  }
  const { outcome, recorded } = await completeOperation(deps, started, op, answerBy);
  const latest = recorded.kind === 'recorded' ? recorded.payment : started;
  if (!outcome) return { kind: 'in-progress', payment: latest };
  return outcome.kind === 'approved' ? { kind: 'captured', payment: latest } : { kind: 'declined', payment: latest, reason: outcome.reason };
}

function replayOf(p: Payment, transId: string): CaptureResult | undefined {
  const tx = p.transactions.find((t) => t.transId === transId);
  if (tx) return tx.status === 'success' ? { kind: 'captured', payment: p } : { kind: 'declined', payment: p, reason: tx.reason ?? '' };
  if (p.operation?.transId === transId) return { kind: 'in-progress', payment: p };
  return undefined;
}

/**
 * The API's answer to a capture. A capture another request claimed first is refused (208003), as
 * racing voids and retries are: this request captured nothing, and answering FAIL while the other
 * capture succeeds would tell the merchant the opposite of what happened.
 */
export function captureResponse(result: CaptureResult, now: Date): CaptureResponse {
  if (result.kind === 'taken') {
    const other = result.payment.operation;
    throw new ApiError(result.payment.status === 'pending' && other && other.kind !== 'capture' ? 'OPERATION_IN_PROGRESS' : 'CAPTURE_NOT_PENDING');
  }
  const p = result.payment;
  const captured = result.kind === 'captured';
  return {
    payment_id: p.paymentId,
    status: captured ? 'settled' : 'pending',
    trans_status: captured ? 'SUCCESS' : 'FAIL',
    date: protocolDate(now.toISOString()),
    ...(result.kind === 'declined' ? { reason: result.reason } : result.kind === 'in-progress' ? { reason: CAPTURE_IN_PROGRESS_REASON } : {}),
  };
}
