import { closesByExpiryAt } from '../domain/attempts';
import { telemetry } from '../observability/telemetry';
import { voidWindowEndsAt } from '../domain/void-window';
import { logger } from '../observability/logger';
import type { Payment, PendingOperation, PendingRefund, Transaction } from '../domain/payment';
import type { Acquirer, FollowUpOutcome, FollowUpRequest } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import { TransitionRejected, type PaymentChange, type PaymentStore } from '../ports/payments';
import { TRY_AGAIN, withBackoff } from './backoff';
import { QUEUES, RECONCILE_AFTER_MS, reconcileAt, type Policy } from './work-queue';

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
 * Where a payment waits once nothing of this change is in flight any more: an authorization in the
 * capture queue (the job works out when it is due), anything still watched or refunding in the
 * reconcile queue, a held decline there until its link expires, the rest nowhere.
 */
export function restingQueue(p: Payment, now: Date, refundsLeft = Object.keys(p.refunds ?? {}).length): PaymentChange['queue'] {
  const watched = Object.values(p.watching ?? {});
  if (p.inFlight || p.action || refundsLeft > 0) return reconcileAt(undefined, now);
  // A held decline becomes final when its link expires: the reconciler then reports it.
  const dues = [
    ...(watched.length ? [now.getTime() + LATE_APPROVAL_CHECK_MS] : []),
    ...(closesByExpiryAt(p) ? [closesByExpiryAt(p)!.getTime()] : []),
  ];
  if (dues.length) return { name: QUEUES.reconcile, dueAt: new Date(Math.min(...dues)).toISOString() };
  if (p.status === 'pending') return { name: QUEUES.capture, dueAt: now.toISOString() };
  return null;
}

/** How often a watched attempt is asked about. */
export const LATE_APPROVAL_CHECK_MS = 15 * 60_000;

export type Recorded = { readonly kind: 'recorded'; readonly payment: Payment } | { readonly kind: 'gone'; readonly payment?: Payment } | { readonly kind: 'deferred' };

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
): Promise<Recorded> {
  const result = await withBackoff<Recorded>(async (n) => {
    // The state the intent write returned saves a read on the first try.
    const p = n === 1 && known ? known : await deps.store.findPayment(paymentId);
    if (!p || p.operation?.transId !== op.transId) return { kind: 'gone', payment: p };
    const now = deps.clock.now();
    const at = now.toISOString();
    const approved = outcome.kind === 'approved';
    const reason = approved ? undefined : (reasonIfDeclined ?? outcome.reason);
    const tx: Transaction = {
      transId: op.transId,
      type: op.kind,
      status: approved ? 'success' : 'fail',
      amountMinor: op.amountMinor,
      at,
      acquirerRef: outcome.acquirerRef,
      actor: op.actor,
      ...(reason ? { reason } : op.kind === 'reversal' && op.reason ? { reason: op.reason } : {}),
    };
    const after = (status: Payment['status'], extra: Partial<Payment> = {}): Payment => ({ ...p, ...extra, status, operation: undefined });
    let change: PaymentChange;
    if (op.kind === 'capture') {
      const voidableUntil = approved ? voidWindowEndsAt(now) : undefined;
      change = approved
        ? { set: { status: 'settled', capturedMinor: op.amountMinor, updatedAt: at, ...(voidableUntil ? { voidableUntil: voidableUntil.toISOString() } : {}) }, remove: ['operation', 'reason'], append: [tx], queue: restingQueue(after('settled'), now) }
        : {
            set: { status: 'pending', reason: tx.reason, updatedAt: at },
            remove: ['operation'],
            append: [tx],
            // A declined capture is not retried automatically: it waits for an operator or its expiry.
            queue: p.authorizationExpiresAt ? { name: QUEUES.capture, dueAt: p.authorizationExpiresAt } : restingQueue(after('pending'), now),
          };
    } else if (op.kind === 'void') {
      change = { set: { status: approved ? 'void' : p.status, updatedAt: at }, remove: ['operation'], append: [tx], queue: restingQueue(after(approved ? 'void' : p.status), now) };
    } else if (op.lateApproval) {
      const late = op.lateApproval;
      // The approval the acquirer gave after we had declined the attempt is kept in the history (for
      // the ledger, never as a callback) beside its reversal.
      const approval: Transaction = { transId: late.transId, type: late.type, status: 'success', amountMinor: op.amountMinor, at, acquirerRef: late.acquirerRef, reason: LATE_APPROVAL_REASON, internal: true };
      change = approved
        ? { set: { status: p.status, updatedAt: at }, remove: ['operation'], append: [approval, tx], queue: restingQueue(after(p.status), now) }
        : {
            set: { status: p.status, updatedAt: at },
            remove: ['operation'],
            // Not reversed: keep asking (the reconciler tries the reversal again).
            watch: { put: { attempt: late.attempt, transId: late.transId, idempotencyKey: late.idempotencyKey, type: late.type, until: new Date(now.getTime() + 24 * 3600_000).toISOString() } },
            queue: { name: QUEUES.reconcile, dueAt: new Date(now.getTime() + LATE_APPROVAL_CHECK_MS).toISOString() },
          };
    } else {
      change = approved
        ? { set: { status: 'reversal', reason: op.reason ?? tx.reason, updatedAt: at }, remove: ['operation'], append: [tx], queue: restingQueue(after('reversal'), now) }
        : { set: { status: 'pending', updatedAt: at }, remove: ['operation'], append: [tx], queue: restingQueue(after('pending'), now) };
    }
    try {
      const recorded = await deps.store.transition(paymentId, { operation: op.transId }, change);
      if (op.kind === 'capture' || op.kind === 'void') telemetry.operationRecorded(op.kind, approved);
      return { kind: 'recorded', payment: recorded };
    } catch (e) {
      if (e instanceof TransitionRejected) return TRY_AGAIN;
      throw e;
    }
  }, undefined, { clock: deps.clock });
  return result ?? { kind: 'deferred' };
}

export const LATE_APPROVAL_REASON = 'Approved by the acquirer after the attempt had been closed; reversed.';

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
): Promise<Recorded> {
  const result = await withBackoff<Recorded>(async (n) => {
    const p = n === 1 && known ? known : await deps.store.findPayment(paymentId);
    if (!p || !p.refunds?.[transId]) return { kind: 'gone', payment: p };
    const now = deps.clock.now();
    const at = now.toISOString();
    const approved = outcome.kind === 'approved';
    const reason = approved ? undefined : (reasonIfDeclined ?? outcome.reason);
    const tx: Transaction = { transId, type: 'refund', status: approved ? 'success' : 'fail', amountMinor: refund.amountMinor, at, acquirerRef: outcome.acquirerRef, actor: refund.actor, ...(reason ? { reason } : {}) };
    const refunded = p.refundedMinor ?? 0;
    const nextRefunded = approved ? refunded + refund.amountMinor : refunded;
    const status = approved && nextRefunded >= refundableMinor(p) ? 'refund' : p.status;
    const left = Object.keys(p.refunds).length - 1;
    try {
      // Taking the payment out of the reconcile queue is right only while no other refund started.
      const recorded = await deps.store.transition(paymentId, { refundInFlight: transId, refundedIs: refunded, statusIn: [p.status], ...(left === 0 ? { refundsInFlightCount: 1 } : {}) }, {
        set: { status, updatedAt: at },
        add: approved ? { refundedMinor: refund.amountMinor } : { refundHeldMinor: -refund.amountMinor },
        refund: { delete: transId },
        append: [tx],
        // Other refunds in flight keep the payment where the reconciler finds them.
        ...(left === 0 ? { queue: restingQueue({ ...p, status, refunds: {} }, now, 0) } : {}),
      });
      telemetry.operationRecorded('refund', approved);
      return { kind: 'recorded', payment: recorded };
    } catch (e) {
      if (e instanceof TransitionRejected) return TRY_AGAIN;
      throw e;
    }
  }, undefined, { clock: deps.clock });
  return result ?? { kind: 'deferred' };
}

/** What can be refunded at most: the captured amount of a DMS payment, else the payment amount. */
export const refundableMinor = (p: Pick<Payment, 'capturedMinor' | 'order'>): number => p.capturedMinor ?? p.order.amountMinor;

/**
 * Starts an exclusive operation: the intent write with the caller's guard (the business rule) plus
 * "nothing else in flight", and the payment in the reconcile queue should the answer never be
 * recorded. Throws TransitionRejected when the rule does not hold.
 */
export async function startOperation(
  deps: Pick<MoneyDeps, 'store' | 'clock' | 'policy'>,
  payment: Payment,
  op: PendingOperation,
  guard: Parameters<PaymentStore['transition']>[1],
  extra: Pick<PaymentChange, 'watch'> = {},
): Promise<Payment> {
  const now = deps.clock.now();
  return deps.store.transition(payment.paymentId, { ...guard, operation: 'none', noRefundsInFlight: true, newTransaction: op.transId }, {
    set: { operation: op, updatedAt: now.toISOString() },
    queue: reconcileAt(deps.policy, now),
    ...extra,
  });
}

/**
 * Runs an exclusive operation after its intent is recorded: the acquirer, then the guarded record.
 * With `answerBy` (the request's deadline less a margin) it stops waiting then: an answer not in
 * yet is "in progress", a record not written yet is left to the reconciler, so a request never
 * times out into a 5xx after the acquirer may have said yes.
 */
export async function completeOperation(deps: MoneyDeps, payment: Payment, op: PendingOperation, answerBy?: Date): Promise<{ outcome?: FollowUpOutcome; recorded: Recorded }> {
  let outcome: FollowUpOutcome | undefined;
  let recorded: Recorded = { kind: 'deferred' };
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
