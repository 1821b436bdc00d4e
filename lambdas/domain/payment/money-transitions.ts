import type { ErrorName } from '../errors';
import { refusalOf, TRANSITIONS } from '../state-machine';
import { voidWindowEndsAt } from '../void-window';
import type { PaymentChange, QueueEntry, Transition } from './change';
import type { TransitionGuard } from './guard';
import type { Payment, PendingOperation, PendingRefund, Transaction, WatchedAttempt } from './model';
import { LATE_APPROVAL_CHECK_MS, QUEUES, restingQueue } from './queues';
import { refundLeftMinor, refundableMinor } from './refunds';
import { LATE_APPROVAL_WATCH_MS } from './attempt-transitions';

/**
 * The transitions of operations that move money after the payment: an intent recorded first (it
 * blocks conflicting operations and names the idempotency key the acquirer is asked with), then the
 * acquirer's answer recorded under that intent. Exclusive operations (capture, void, reversal) live
 * in `payment.operation`, refunds in `payment.refunds`.
 */

/** The acquirer's final answer to an operation. */
export interface OperationAnswer {
  readonly approved: boolean;
  readonly acquirerRef: string;
  /** Why it was declined. */
  readonly reason?: string;
}

export const LATE_APPROVAL_REASON = 'Approved by the acquirer after the attempt had been closed; reversed.';

/**
 * An exclusive operation's intent: the rule it needs plus "nothing else in flight", the operation id
 * new, and the payment in the reconcile queue should the answer never be recorded.
 */
function startExclusive(op: PendingOperation, rule: TransitionGuard, recheck: QueueEntry, now: Date, extra: Pick<PaymentChange, 'watch'> = {}): Transition {
  return {
    guard: { ...rule, operation: 'none', noRefundsInFlight: true, newTransaction: op.transId },
    change: { set: { operation: op, updatedAt: now.toISOString() }, queue: recheck, ...extra },
  };
}

/** DMS: capture an authorization (pending). */
export const startCapture = (op: PendingOperation, recheck: QueueEntry, now: Date): Transition => startExclusive(op, { statusIn: TRANSITIONS.capture.from }, recheck, now);

/** DMS: give an authorization back (pending → reversal). */
export const startRelease = (op: PendingOperation, recheck: QueueEntry, now: Date): Transition => startExclusive(op, { statusIn: TRANSITIONS.release.from }, recheck, now);

/** Void a settled payment inside its window, with nothing refunded or being refunded. */
export const startVoid = (op: PendingOperation, recheck: QueueEntry, now: Date): Transition =>
  startExclusive(op, { statusIn: TRANSITIONS.void.from, voidableAt: now, refundHeldAtMost: 0 }, recheck, now);

/** Reverse an approval that came after its attempt was declined; the attempt is no longer watched. */
export const startLateReversal = (op: PendingOperation, watched: Pick<WatchedAttempt, 'attempt'>, recheck: QueueEntry, now: Date): Transition =>
  startExclusive(op, { watching: watched.attempt }, recheck, now, { watch: { delete: watched.attempt } });

/** The answer to an exclusive operation, recorded under its intent. */
export function recordOperationAnswer(p: Payment, op: PendingOperation, answer: OperationAnswer, now: Date): Transition {
  const at = now.toISOString();
  const { approved } = answer;
  const reason = approved ? undefined : answer.reason;
  const tx: Transaction = {
    transId: op.transId,
    type: op.kind,
    status: approved ? 'success' : 'fail',
    amountMinor: op.amountMinor,
    at,
    acquirerRef: answer.acquirerRef,
    actor: op.actor,
    ...(reason ? { reason } : op.kind === 'reversal' && op.reason ? { reason: op.reason } : {}),
  };
  const after = (status: Payment['status'], extra: Partial<Payment> = {}): Payment => ({ ...p, ...extra, status, operation: undefined });
  const guard: TransitionGuard = { operation: op.transId };
  if (op.kind === 'capture') {
    const voidableUntil = approved ? voidWindowEndsAt(now) : undefined;
    return {
      guard,
      change: approved
        ? { set: { status: 'settled', capturedMinor: op.amountMinor, updatedAt: at, ...(voidableUntil ? { voidableUntil: voidableUntil.toISOString() } : {}) }, remove: ['operation', 'reason'], append: [tx], queue: restingQueue(after('settled', { transactions: [...p.transactions, tx] }), now) }
        : {
            set: { status: 'pending', reason: tx.reason, updatedAt: at },
            remove: ['operation'],
            append: [tx],
            // A declined capture is not retried automatically: it waits for an operator or its expiry.
            queue: p.authorizationExpiresAt ? { name: QUEUES.capture, dueAt: p.authorizationExpiresAt } : restingQueue(after('pending'), now),
          },
    };
  }
  if (op.kind === 'void') {
    const status = approved ? 'void' : p.status;
    return { guard, change: { set: { status, updatedAt: at }, remove: ['operation'], append: [tx], queue: restingQueue(after(status), now) } };
  }
  if (op.lateApproval) {
    const late = op.lateApproval;
    // The approval the acquirer gave after we had declined the attempt is kept in the history (for
    // the ledger, never as a callback) beside its reversal.
    const paidWith = late.paidWith ? { paidWith: late.paidWith } : {};
    const approval: Transaction = { transId: late.transId, type: late.type, status: 'success', amountMinor: op.amountMinor, at, acquirerRef: late.acquirerRef, reason: LATE_APPROVAL_REASON, internal: true, ...paidWith };
    return {
      guard,
      change: approved
        ? { set: { status: p.status, updatedAt: at }, remove: ['operation'], append: [approval, { ...tx, ...paidWith }], queue: restingQueue(after(p.status), now) }
        : {
            set: { status: p.status, updatedAt: at },
            remove: ['operation'],
            // Not reversed: keep asking (the reconciler tries the reversal again).
            watch: { put: { attempt: late.attempt, transId: late.transId, idempotencyKey: late.idempotencyKey, type: late.type, ...paidWith, until: new Date(now.getTime() + LATE_APPROVAL_WATCH_MS).toISOString() } },
            queue: { name: QUEUES.reconcile, dueAt: new Date(now.getTime() + LATE_APPROVAL_CHECK_MS).toISOString() },
          },
    };
  }
  return {
    guard,
    change: approved
      ? { set: { status: 'reversal', reason: op.reason ?? tx.reason, updatedAt: at }, remove: ['operation'], append: [tx], queue: restingQueue(after('reversal'), now) }
      : { set: { status: 'pending', updatedAt: at }, remove: ['operation'], append: [tx], queue: restingQueue(after('pending'), now) },
  };
}

/** Why a refund cannot start now. */
export type RefundRefusal = Extract<ErrorName, 'REFUND_NOT_ALLOWED' | 'REFUND_AMOUNT_TOO_BIG' | 'OPERATION_IN_PROGRESS'> | ErrorName;

/**
 * A refund's intent: reserved against what is left to refund (an atomic addition to what refunds
 * hold, so concurrent refunds that fit never contend), with no void, capture or reversal in flight.
 * Refused before any write when the rule does not hold on the payment as read.
 */
export function startRefund(
  payment: Payment,
  input: { readonly transId: string; readonly refund: PendingRefund; readonly recheck: QueueEntry },
  now: Date,
): Transition | { readonly refused: RefundRefusal } {
  const refusal = refusalOf('refund', payment);
  if (refusal) return { refused: refusal };
  const { transId, refund } = input;
  // What is held by refunds in flight is not left to refund (it comes back only if one is declined).
  if (refund.amountMinor > refundLeftMinor(payment)) return { refused: 'REFUND_AMOUNT_TOO_BIG' };
  if (payment.operation) return { refused: 'OPERATION_IN_PROGRESS' };
  const at = now.toISOString();
  return {
    guard: { statusIn: TRANSITIONS.refund.from, operation: 'none', refundHeldAtMost: refundableMinor(payment) - refund.amountMinor, newTransaction: transId },
    change: {
      // The platform reports a refund as waiting first, then with its outcome (same trans id).
      set: { status: 'settled', updatedAt: at },
      append: [{ transId, type: 'refund', status: 'waiting', amountMinor: refund.amountMinor, at: refund.startedAt, actor: refund.actor }],
      add: { refundHeldMinor: refund.amountMinor },
      refund: { put: [transId, refund] },
      queue: input.recheck,
    },
  };
}

/**
 * A refund's answer. An approval adds to the refunded total (guarded by the total it was computed
 * from, so the status becomes `refund` exactly when the last of the payment is refunded); a decline
 * gives the reservation back.
 */
export function recordRefundAnswer(p: Payment, transId: string, refund: PendingRefund, answer: OperationAnswer, now: Date): Transition {
  const at = now.toISOString();
  const { approved } = answer;
  const reason = approved ? undefined : answer.reason;
  const tx: Transaction = { transId, type: 'refund', status: approved ? 'success' : 'fail', amountMinor: refund.amountMinor, at, acquirerRef: answer.acquirerRef, actor: refund.actor, ...(reason ? { reason } : {}) };
  const refunded = p.refundedMinor ?? 0;
  // A payment charged back stays `chargeback`: what the chargeback took is not the merchant's to refund.
  const status = approved && p.status !== 'chargeback' && refunded + refund.amountMinor >= refundableMinor(p) ? 'refund' : p.status;
  const left = Object.keys(p.refunds ?? {}).length - 1;
  return {
    // Taking the payment out of the reconcile queue is right only while no other refund started.
    guard: { refundInFlight: transId, refundedIs: refunded, statusIn: [p.status], ...(left === 0 ? { refundsInFlightCount: 1 } : {}) },
    change: {
      set: { status, updatedAt: at },
      add: approved ? { refundedMinor: refund.amountMinor } : { refundHeldMinor: -refund.amountMinor },
      refund: { delete: transId },
      append: [tx],
      // Other refunds in flight keep the payment where the reconciler finds them.
      ...(left === 0 ? { queue: restingQueue({ ...p, status, refunds: {} }, now, 0) } : {}),
    },
  };
}

/** An authorization back in the capture queue for its next event, while nothing is in flight. */
export const fileForCapture = (dueAt: Date, now: Date): Transition => ({
  guard: { statusIn: ['pending'], operation: 'none' },
  change: { set: { updatedAt: now.toISOString() }, queue: { name: QUEUES.capture, dueAt: dueAt.toISOString() } },
});

/** Out of every work queue, only while nothing is in flight (an intent keeps its place in the reconcile queue). */
export const leaveQueues = (p: Payment, now: Date): Transition => ({
  guard: { statusIn: [p.status], operation: 'none', noRefundsInFlight: true, inFlight: 'none' },
  change: { set: { updatedAt: now.toISOString() }, queue: null },
});

/**
 * Where the reconciler leaves a payment it looked at: back in its queue at `nextLook` while anything
 * is left in flight or watched, else where it rests, only while nothing started meanwhile.
 */
export function refile(p: Payment, nextLook: Date, now: Date): Transition {
  return underWay(p)
    ? { guard: {}, change: { set: { updatedAt: p.updatedAt }, queue: { name: QUEUES.reconcile, dueAt: nextLook.toISOString() } } }
    : { guard: AT_REST(p), change: { set: { updatedAt: p.updatedAt }, queue: restingQueue(p, now) } };
}

/** Whether anything of the payment is in flight or watched (the reconciler looks again soon). */
const underWay = (p: Payment): boolean => Boolean(p.inFlight || p.action || p.operation || Object.keys(p.refunds ?? {}).length || Object.keys(p.watching ?? {}).length);
/** The guard of a payment filed where it rests: nothing started since it was read. */
const AT_REST = (p: Payment): TransitionGuard => ({ inFlight: 'none', operation: 'none', noRefundsInFlight: true, statusIn: [p.status] });

/**
 * The scheduled dispute check number `done` (0-based) made on a payment at rest: the count and the
 * payment filed for its next check (or out of the queue after the last) in one write, where the
 * count and the reconciler's refile after it took two writes of the payment. Undefined when
 * something is under way: the count alone then (chargebacks.ts `disputeChecked`), and the refile.
 */
export function checkedAtRest(p: Payment, done: number, now: Date): Transition | undefined {
  if (underWay(p)) return undefined;
  return { guard: AT_REST(p), change: { set: { disputeChecks: done + 1, updatedAt: p.updatedAt }, queue: restingQueue({ ...p, disputeChecks: done + 1 }, now) } };
}
