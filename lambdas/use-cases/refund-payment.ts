import { ApiError, invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import { refusalOf } from '../domain/state-machine';
import { startRefund, type Payment, type PendingRefund } from '../domain/payment';
import { TRY_AGAIN, withBackoff } from './backoff';
import { askAcquirer, followUpRequest, operationKey, recordRefund, untilDone, type MoneyDeps } from './money-operations';
import { reconcileAt } from './record-outcome';

export { refundableMinor } from '../domain/payment';
export type RefundDeps = MoneyDeps;

/** A refund of a payment: how much, who asks, and the transaction id a replayed request reuses. */
export interface RefundCommand {
  /** The payment as just read, or its id. */
  readonly payment: Payment | string;
  readonly amountMinor: number;
  /** `merchant:<key>` or `operator:<name>`. */
  readonly actor: string;
  /** A stable transaction id (from the request's Idempotency-Key): a replay finds its first intent. */
  readonly transId?: string;
  /**
   * When the answer is due at the latest (the function's deadline less a margin). Once the intent is
   * recorded the refund is accepted whatever follows, so the caller stops waiting for the acquirer
   * and the record then, never failing after the money may have moved; the reconciler finishes.
   */
  readonly answerBy?: Date;
}

/** Accepted: the intent is recorded (or was, by the request this one replays); the outcome follows in the status and callbacks. */
export interface RefundAccepted {
  readonly kind: 'accepted';
  readonly payment: Payment;
}

/** A replayed request whose refund is already in flight or recorded. */
export const refundAlreadyMade = (p: Payment, transId: string): boolean => Boolean(p.refunds?.[transId]) || p.transactions.some((t) => t.transId === transId);

/**
 * Refunds all or part of a settled payment; several partial refunds up to the refundable amount.
 * The intent (startRefund) adds the amount to what refunds hold, in one conditional write whose
 * condition is "it still fits and no void, capture or reversal is in flight" (an atomic addition, so
 * concurrent refunds that fit never contend). Then the acquirer is asked with the refund's own
 * idempotency key, and the answer recorded with a write guarded by the intent; a declined refund
 * gives its reservation back, and a full refund ends in `refund`. Whatever is left in flight (crash,
 * timeout, contention past the retries) the reconciler finishes. Refusals are the catalog's errors.
 */
export async function refund(deps: RefundDeps, command: RefundCommand): Promise<RefundAccepted> {
  const first = typeof command.payment === 'string' ? await deps.store.findPayment(command.payment) : command.payment;
  if (!first) throw new ApiError('PAYMENT_NOT_FOUND');
  const transId = command.transId ?? deps.ids.transId();
  // A replayed request whose refund was made already (even if it refunded the payment in full
  // since): its first answer, before any rule that only holds for a new refund.
  if (command.transId && refundAlreadyMade(first, transId)) return { kind: 'accepted', payment: first };
  const refusal = refusalOf('refund', first);
  if (refusal) throw new ApiError(refusal);
  if (!(command.amountMinor > 0)) throw invalidRequest([{ path: 'amount', message: RULE.positive }]);
  if (!first.authorization) throw new Error(`payment ${first.paymentId} has no authorization to refund`);
  const now = deps.clock.now();
  const pending: PendingRefund = { amountMinor: command.amountMinor, idempotencyKey: operationKey(first.paymentId, 'refund', transId), startedAt: now.toISOString(), actor: command.actor };

  // The rule is decided by the write; a lost write only means the payment changed (another refund
  // recorded, an operation finished): decide again on the payment it answered with, with backoff.
  let latest: Payment | undefined = first;
  const reserved = await withBackoff<Payment>(async () => {
    const payment = latest ?? (await deps.store.findPayment(first.paymentId));
    latest = undefined;
    if (!payment) throw new ApiError('PAYMENT_NOT_FOUND');
    // A replay's refund made already; or this request's own reservation, whose answer was lost (its transaction id is fresh).
    if (command.transId ? refundAlreadyMade(payment, transId) : Boolean(payment.refunds?.[transId])) return payment;
    const intent = startRefund(payment, { transId, refund: pending, recheck: reconcileAt(deps.policy, now) }, now);
    if ('refused' in intent) throw new ApiError(intent.refused);
    const result = await deps.store.apply(payment.paymentId, intent);
    if (result.applied) return result.payment;
    latest = result.payment;
    return TRY_AGAIN;
  }, undefined, { rethrow: true, clock: deps.clock });
  if (!reserved) throw new ApiError('OPERATION_IN_PROGRESS');
  if (!reserved.refunds?.[transId]) return { kind: 'accepted', payment: reserved };

  const finish = (async () => {
    const outcome = await askAcquirer(() => deps.acquirer.refund(followUpRequest(reserved, pending.idempotencyKey, pending.amountMinor)));
    // No answer, or no record yet: the intent is in the reconcile queue; the outcome follows.
    if (outcome) await recordRefund(deps, reserved.paymentId, transId, pending, outcome, undefined, reserved);
  })();
  await untilDone(finish, command.answerBy);
  return { kind: 'accepted', payment: reserved };
}
