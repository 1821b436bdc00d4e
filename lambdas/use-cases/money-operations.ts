import { telemetry } from '../observability/telemetry';
import { logger } from '../observability/logger';
import { recordOperationAnswer, recordRefundAnswer, type Payment, type PendingOperation, type PendingRefund, type Transition } from '../domain/payment';
import type { Acquirer, FollowUpOutcome, FollowUpRequest } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import type { PaymentStore } from '../ports/payments';
import { TRY_AGAIN, withBackoff } from './backoff';
import { RECONCILE_AFTER_MS, reconcileAt, type Policy } from './work-queue';

export { LATE_APPROVAL_CHECK_MS, LATE_APPROVAL_REASON, refundableMinor, restingQueue } from '../domain/payment';

/**
 * The discipline every operation that moves money follows after the payment itself:
 *   1. record the intent with a conditional write (it blocks conflicting operations),
 *   2. call the acquirer with a stable idempotency key,
 *   3. record the answer with a write guarded by that intent,
 *   4. leave whatever a crash, a timeout or a lost race left in flight to the reconciler, which asks
 *      the acquirer by the same key.
 * Exclusive operations (capture, void, reversal) live in `payment.operation`, refunds in
 * `payment.refunds`; a refund cannot start while an exclusive operation is in flight and a void
 * cannot start once anything was refunded or is being refunded.
 */
export interface MoneyDeps {
  readonly policy?: Pick<Policy, 'reconcileAfterMs'>;
  readonly store: PaymentStore;
  readonly acquirer: Acquirer;
  readonly clock: Clock;
  readonly ids: Ids;
}

/** An operation in flight longer than this (by default) was interrupted: the reconciler settles it. */
export const STALE_OPERATION_MS = RECONCILE_AFTER_MS;

export const INTERRUPTED_OPERATION_REASON = 'The operation was interrupted before the acquirer received it.';


export const operationKey = (paymentId: string, kind: PendingOperation['kind'] | 'refund', transId: string): string => `${paymentId}.${kind}.${transId}`;

/** The acquirer's answer, or undefined when the call failed without one (timeout, network). */
export async function askAcquirer(call: () => Promise<FollowUpOutcome>): Promise<FollowUpOutcome | undefined> {
  try {
    return await call();
  } catch (e) {
    logger.warn('acquirer call failed', { error: e as Error });
    return undefined;
  }
}

export function followUpRequest(payment: Payment, idempotencyKey: string, amountMinor: number): FollowUpRequest {
  return {
    idempotencyKey,
    paymentId: payment.paymentId,
    authorization: payment.authorization ?? { idempotencyKey: '', acquirerRef: '' },
    amountMinor,
    currency: payment.order.currency,
  };
}

/** Sends an exclusive operation to the acquirer. */
export function sendOperation(acquirer: Acquirer, payment: Payment, op: PendingOperation): Promise<FollowUpOutcome | undefined> {
  const request = op.lateApproval
    ? { ...followUpRequest(payment, op.idempotencyKey, op.amountMinor), authorization: { idempotencyKey: op.lateApproval.idempotencyKey, acquirerRef: op.lateApproval.acquirerRef } }
    : followUpRequest(payment, op.idempotencyKey, op.amountMinor);
  return askAcquirer(() => (op.kind === 'capture' ? acquirer.capture(request) : op.kind === 'void' ? acquirer.void(request) : acquirer.reverse(request)));
}

/**
 * What became of an operation's answer in our records: written; gone (the operation was finished
 * by someone else, or the payment no longer carries it); deferred (the write kept failing, the
 * reconciler finishes it). An attempt's answer has its own (AttemptRecorded, record-outcome.ts).
 */
export type OperationRecorded = { readonly kind: 'recorded'; readonly payment: Payment } | { readonly kind: 'gone'; readonly payment?: Payment } | { readonly kind: 'deferred' };

/**
 * Records the answer to an exclusive operation with a write guarded by its intent. Retried with
 * backoff on contention and failed writes; `gone` when someone else (a racing reconciler) recorded
 * it, `deferred` when it could not be written now (the reconciler will).
 */
export async function recordOperation(
  deps: Pick<MoneyDeps, 'store' | 'clock' | 'ids'>,
  paymentId: string,
  op: PendingOperation,
  outcome: FollowUpOutcome,
  reasonIfDeclined?: string,
  known?: Payment,
): Promise<OperationRecorded> {
  // The state the intent write returned saves a read on the first try, a refused write's on the next.
  let latest = known;
  const result = await withBackoff<OperationRecorded>(async () => {
    const p = latest ?? (await deps.store.findPayment(paymentId));
    latest = undefined;
    if (!p || p.operation?.transId !== op.transId) return { kind: 'gone', payment: p };
    const approved = outcome.kind === 'approved';
    const recorded = await deps.store.apply(paymentId, recordOperationAnswer(p, op, answerOf(outcome, reasonIfDeclined), deps.clock.now()));
    if (!recorded.applied) {
      latest = recorded.payment;
      return TRY_AGAIN;
    }
    if (op.kind === 'capture' || op.kind === 'void') telemetry.operationRecorded(op.kind, approved);
    return { kind: 'recorded', payment: recorded.payment };
  }, undefined, { clock: deps.clock });
  return result ?? { kind: 'deferred' };
}

/** The acquirer's answer as the domain records it; a decline's reason may be ours (an interrupted operation). */
const answerOf = (outcome: FollowUpOutcome, reasonIfDeclined?: string) => ({
  approved: outcome.kind === 'approved',
  acquirerRef: outcome.acquirerRef,
  ...(outcome.kind === 'approved' ? {} : { reason: reasonIfDeclined ?? outcome.reason }),
});

/**
 * Records a refund's answer. An approval adds to the refunded total (guarded by the total it was
 * computed from, so the status becomes `refund` exactly when the last of the payment is refunded);
 * a decline gives the reservation back.
 */
export async function recordRefund(
  deps: Pick<MoneyDeps, 'store' | 'clock'>,
  paymentId: string,
  transId: string,
  refund: PendingRefund,
  outcome: FollowUpOutcome,
  reasonIfDeclined?: string,
  known?: Payment,
): Promise<OperationRecorded> {
  let latest = known;
  const result = await withBackoff<OperationRecorded>(async () => {
    const p = latest ?? (await deps.store.findPayment(paymentId));
    latest = undefined;
    if (!p || !p.refunds?.[transId]) return { kind: 'gone', payment: p };
    const recorded = await deps.store.apply(paymentId, recordRefundAnswer(p, transId, refund, answerOf(outcome, reasonIfDeclined), deps.clock.now()));
    if (!recorded.applied) {
      latest = recorded.payment;
      return TRY_AGAIN;
    }
    telemetry.operationRecorded('refund', outcome.kind === 'approved');
    return { kind: 'recorded', payment: recorded.payment };
  }, undefined, { clock: deps.clock });
  return result ?? { kind: 'deferred' };
}

/**
 * Records an exclusive operation's intent (a start transition: startCapture, startVoid …), with
 * the payment in the reconcile queue should the answer never be recorded. Refused: the payment as
 * it is now, for the caller's rule to answer on.
 */
export async function startOperation(
  deps: Pick<MoneyDeps, 'store' | 'clock' | 'policy'>,
  payment: Payment,
  start: (recheck: ReturnType<typeof reconcileAt>, now: Date) => Transition,
  /** The operation's transaction id when this request made it up (not a replay's): an intent holding it was written by this request. */
  freshTransId?: string,
): Promise<{ readonly started: true; readonly payment: Payment } | { readonly started: false; readonly payment: Payment | undefined }> {
  const now = deps.clock.now();
  const result = await deps.store.apply(payment.paymentId, start(reconcileAt(deps.policy, now), now));
  if (result.applied) return { started: true, payment: result.payment };
  // The intent's answer was lost and the SDK's next try found it written: it is this request's.
  if (freshTransId !== undefined && result.payment?.operation?.transId === freshTransId) return { started: true, payment: result.payment };
  return { started: false, payment: result.payment };
}

/**
 * Runs an exclusive operation after its intent is recorded: the acquirer, then the guarded record.
 * With `answerBy` (the request's deadline less a margin) it stops waiting then: an answer not in
 * yet is "in progress", a record not written yet is left to the reconciler, so a request never
 * times out into a 5xx after the acquirer may have said yes.
 */
export async function completeOperation(deps: MoneyDeps, payment: Payment, op: PendingOperation, answerBy?: Date): Promise<{ outcome?: FollowUpOutcome; recorded: OperationRecorded }> {
  let outcome: FollowUpOutcome | undefined;
  let recorded: OperationRecorded = { kind: 'deferred' };
  await untilDone(
    (async () => {
      outcome = await sendOperation(deps.acquirer, payment, op);
      if (outcome) recorded = await recordOperation(deps, payment.paymentId, op, outcome, undefined, payment);
    })(),
    answerBy,
  );
  return { ...(outcome ? { outcome } : {}), recorded };
}

/**
 * Waits for work the answer may do without, at most until `answerBy` (real time: the function's
 * deadline is). Work still running then goes on while the process lives; what it leaves in flight
 * the reconciler finishes. Its failure is logged, never the answer's.
 */
export async function untilDone(work: Promise<unknown>, answerBy: Date | undefined): Promise<void> {
  const logged = work.catch((e: unknown) => logger.warn('operation left to reconciliation', { error: e as Error }));
  if (!answerBy) return void (await logged);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([logged, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, answerBy.getTime() - Date.now()))))]);
  clearTimeout(timer);
}
