import { ApiError } from '../domain/errors';
import { startCapture, startRelease, type Payment, type PendingOperation, type Transition, type QueueEntry } from '../domain/payment';
import { refusalOf } from '../domain/state-machine';
import { completeOperation, operationKey, startOperation, type MoneyDeps } from './money-operations';

export type CaptureDeps = MoneyDeps;

/** Why a capture reads as not done yet: the acquirer's answer is not known; the outcome follows in status and callbacks. */
export const CAPTURE_IN_PROGRESS_REASON = 'The capture is being processed; its outcome follows in the payment status and the callback.';

/** A capture of an authorization: how much, who asks, the transaction id a replayed request reuses. */
export interface CaptureCommand {
  readonly payment: Payment;
  readonly amountMinor: number;
  /** `merchant:<key>`, `operator:<name>` or the capture job. */
  readonly actor: string;
  readonly transId?: string;
  /** When the answer is due at the latest: an acquirer answer not in by then is "in progress". */
  readonly answerBy?: Date;
}

export type CaptureResult =
  | { readonly kind: 'captured'; readonly payment: Payment }
  | { readonly kind: 'declined'; readonly payment: Payment; readonly reason: string }
  /** Sent, but the acquirer's answer is not known yet: the reconciler finishes it. */
  | { readonly kind: 'in-progress'; readonly payment: Payment }
  /** Someone else (the job, an operator, another request) captured or released it first. */
  | { readonly kind: 'taken'; readonly payment: Payment };

/**
 * Captures an authorization, fully or once partially (amount ≤ authorized). Whoever asks — the
 * API, an operator, the capture job — records the intent with a conditional write first (pending,
 * nothing else in flight), so two at the same moment can never both capture; the acquirer's answer
 * is recorded with a second write guarded by that intent. A declined capture leaves it pending.
 */
export async function capture(deps: CaptureDeps, command: CaptureCommand): Promise<CaptureResult> {
  const { payment, amountMinor, actor, transId, answerBy } = command;
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
  return runExclusive(deps, payment, op, (recheck, now) => startCapture(op, recheck, now), transId, answerBy);
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
  return runExclusive(deps, payment, op, (recheck, now) => startRelease(op, recheck, now), undefined, answerBy);
}

async function runExclusive(
  deps: CaptureDeps,
  payment: Payment,
  op: PendingOperation,
  start: (recheck: QueueEntry, now: Date) => Transition,
  replayId?: string,
  answerBy?: Date,
): Promise<CaptureResult> {
  const intent = await startOperation(deps, payment, start, replayId === undefined ? op.transId : undefined);
  if (!intent.started) {
    const current = intent.payment ?? payment;
    return (replayId && replayOf(current, replayId)) || { kind: 'taken', payment: current };
  }
  const started = intent.payment;
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
