import { ApiError } from '../domain/errors';
import { startVoid, type Payment, type PendingOperation } from '../domain/payment';
import { refusalOf } from '../domain/state-machine';
import { voidBlockedReason } from '../domain/void-window';
import { completeOperation, operationKey, startOperation, type MoneyDeps } from './money-operations';

export type VoidDeps = MoneyDeps;

/** Why a void reads as not done yet: the acquirer's answer is not known; the outcome follows in status and callbacks. */
export const VOID_IN_PROGRESS_REASON = 'The void is being processed; its outcome follows in the payment status and the callback.';

/** A void of a payment: who asks, and the transaction id a replayed request reuses. */
export interface VoidCommand {
  /** The payment as just read, or its id. */
  readonly payment: Payment | string;
  readonly actor: string;
  readonly transId?: string;
  /** When the answer is due at the latest: an acquirer answer not in by then is "in progress". */
  readonly answerBy?: Date;
}

/** What came of a void, with the payment it acted on and when it was decided. */
export type VoidResult = { readonly payment: Payment; readonly at: Date } & (
  | { readonly kind: 'voided' }
  /** The acquirer declined it, or the void window or a refund stands in the way (`reason`). */
  | { readonly kind: 'failed'; readonly reason: string }
  /** Sent, but the acquirer's answer is not known yet: the reconciler finishes it. */
  | { readonly kind: 'in-progress' }
);

/**
 * Voids a settled payment inside its window (the day of the payment, before 21:00 UTC+3) that has
 * nothing refunded or being refunded. The intent is one conditional write whose condition is the
 * rule itself (settled, inside the window, nothing refunded, nothing else in flight), so a racing
 * refund or void cannot slip in; then the acquirer, then the answer recorded under that intent.
 * Concurrent voids: exactly one reaches the acquirer.
 */
export async function voidPayment(deps: VoidDeps, command: VoidCommand): Promise<VoidResult> {
  const payment = typeof command.payment === 'string' ? await deps.store.findPayment(command.payment) : command.payment;
  if (!payment) throw new ApiError('PAYMENT_NOT_FOUND');
  const now = deps.clock.now();
  const failed = (p: Payment, reason: string): VoidResult => ({ kind: 'failed', payment: p, at: now, reason });
  if (command.transId) {
    const replayed = replayOf(payment, command.transId, now);
    if (replayed) return replayed;
  }
  const refusal = refusalOf('void', payment);
  if (refusal) throw new ApiError(refusal);
  const blocked = voidBlockedReason(payment, now);
  if (blocked) return failed(payment, blocked);
  // Another void already on its way answers as a void that won does: this one voids nothing.
  if (payment.operation?.kind === 'void') throw new ApiError('VOID_NOT_SETTLED');
  if (payment.operation || Object.keys(payment.refunds ?? {}).length) throw new ApiError('OPERATION_IN_PROGRESS');
  if (!payment.authorization) throw new Error(`payment ${payment.paymentId} has no authorization to void`);

  const transId = command.transId ?? deps.ids.transId();
  const op: PendingOperation = {
    kind: 'void',
    transId,
    amountMinor: payment.capturedMinor ?? payment.order.amountMinor,
    idempotencyKey: operationKey(payment.paymentId, 'void', transId),
    startedAt: now.toISOString(),
    actor: command.actor,
  };
  const intent = await startOperation(deps, payment, (recheck) => startVoid(op, recheck, now), command.transId === undefined ? transId : undefined);
  if (!intent.started) {
    // Another void or a refund got there first: the rule answers on what is there now.
    const current = intent.payment;
    if (current && command.transId) {
      const replayed = replayOf(current, command.transId, now);
      if (replayed) return replayed;
    }
    if (!current || refusalOf('void', current)) throw new ApiError('VOID_NOT_SETTLED');
    const reason = voidBlockedReason(current, now);
    if (reason) return failed(current, reason);
    throw new ApiError(current.operation?.kind === 'void' ? 'VOID_NOT_SETTLED' : 'OPERATION_IN_PROGRESS');
  }
  const started = intent.payment;
  const { outcome } = await completeOperation(deps, started, op, command.answerBy);
  if (!outcome) return { kind: 'in-progress', payment: started, at: now };
  // The acquirer's answer is the answer, recorded or (after the retries) left to the reconciler.
  return outcome.kind === 'approved' ? { kind: 'voided', payment: started, at: now } : failed(started, outcome.reason);
}

/** The first answer to a replayed request: from its recorded transaction, or "in progress". */
function replayOf(p: Payment, transId: string, now: Date): VoidResult | undefined {
  const tx = p.transactions.find((t) => t.transId === transId);
  if (tx) return tx.status === 'success' ? { kind: 'voided', payment: p, at: now } : { kind: 'failed', payment: p, at: now, reason: tx.reason ?? '' };
  if (p.operation?.transId === transId) return { kind: 'in-progress', payment: p, at: now };
  return undefined;
}
