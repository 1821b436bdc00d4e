import { closesByExpiryAt } from '../domain/attempts';
import { telemetry } from '../observability/telemetry';
import { LATE_APPROVAL_CHECK_MS, LATE_APPROVAL_WATCH_MS, QUEUES, closeLink, disputeCheckDueAt, disputeNewsUnread, recordLocalDecline, refile, startLateReversal, stopWatching, type Payment, type PendingOperation, type WatchedAttempt } from '../domain/payment';
import type { Acquirer, AcquirerOutcome, OperationRef } from '../ports/acquirer';
import type { Merchant, MerchantDirectory } from '../ports/merchants';
import { merchantOf } from './payment-attempt';
import {
  INTERRUPTED_OPERATION_REASON,
  askAcquirer,
  completeOperation,
  followUpRequest,
  operationKey,
  recordOperation,
  recordRefund,
  sendOperation,
  startOperation,
} from './money-operations';
import { ACTION_TIMEOUT_MS, maxDeclinesOf, recordOutcome, type RecordDeps } from './record-outcome';
import { drainDue, type DrainOptions, type QueueReport } from './work-queue';
import { recordChargebacks, takeDisputeReport } from './chargebacks';
import type { DisputeLog } from '../ports/disputes';

/** How long an intent the acquirer could not answer on time waits for the next look, unless the policy says (RECONCILE_RETRY_SECONDS). */
const RETRY_LATER_MS = 5 * 60_000;
export { LATE_APPROVAL_WATCH_MS };
export const INTERRUPTED_REASON = 'The payment attempt was interrupted before the acquirer received it.';
export const ABANDONED_REASON = 'The customer did not complete the confirmation.';

export interface ReconcileDeps extends RecordDeps {
  readonly acquirer: Acquirer;
  readonly merchants: MerchantDirectory;
  readonly disputes: DisputeLog;
}

export type ReconcileOutcome = 'settled' | 'released' | 'reversed' | 'postponed';
export type ReconcileReport = QueueReport<ReconcileOutcome>;

/**
 * Finishes whatever was left in flight on a payment — an attempt without an answer (crash, timeout),
 * a challenge the customer left, a capture, void, reversal or refund whose answer was never
 * recorded — by asking the acquirer by the operation's idempotency key and recording the answer
 * with the same guarded write the request would have used, so a late request and this job can never
 * both record it. An operation the acquirer never received is closed there first (so it can never
 * happen later) and then released here. Closed attempts the acquirer could not close are watched,
 * and an approval that shows up for one of them is reversed.
 */
export async function reconcileDue(deps: ReconcileDeps, options: DrainOptions = {}): Promise<ReconcileReport> {
  const report = await drainDue(deps, QUEUES.reconcile, ['settled', 'released', 'reversed', 'postponed'], (payment, now) => reconcilePayment(deps, payment, now), options);
  // An acquirer that reports disputes itself (the sandbox): the payments it has news of are noted
  // and read now. One worker of a sharded run takes the report (the others would note the same news
  // again). Taken after the queue, so a failure here leaves the queue's work done; the report keeps
  // its news until taken, and the next run takes it.
  if (!options.part || options.part.index === 0) {
    for (const paymentId of await takeDisputeReport(deps)) {
      const payment = await deps.store.findPayment(paymentId);
      if (!payment) continue;
      report.examined++;
      report[await reconcilePayment(deps, payment, deps.clock.now())]++;
    }
  }
  return report;
}

const isFinal = (o: AcquirerOutcome | undefined): o is Extract<AcquirerOutcome, { kind: 'approved' | 'declined' }> => o?.kind === 'approved' || o?.kind === 'declined';
const due = (since: string | undefined, afterMs: number, now: Date) => since === undefined || Date.parse(since) + afterMs <= now.getTime();
const refOf = (paymentId: string, idempotencyKey: string): OperationRef => ({ paymentId, idempotencyKey });

/**
 * What the acquirer says of an operation, made final when it had no final answer: `neverReceived`
 * when it did not know the key and declined it on close (the operation can then never happen).
 */
async function finalAnswer(acquirer: Acquirer, ref: OperationRef): Promise<{ outcome?: AcquirerOutcome; neverReceived: boolean }> {
  const seen = (await askAcquirer(() => acquirer.lookup(ref) as Promise<never>)) as AcquirerOutcome | undefined;
  if (isFinal(seen)) return { outcome: seen, neverReceived: false };
  const closed = (await askAcquirer(() => acquirer.close(ref) as Promise<never>)) as AcquirerOutcome | undefined;
  return { outcome: closed, neverReceived: seen === undefined && closed?.kind === 'declined' };
}

export async function reconcilePayment(deps: ReconcileDeps, payment: Payment, now: Date): Promise<ReconcileOutcome> {
  const results: ReconcileOutcome[] = [];
  const step = async (run: () => Promise<ReconcileOutcome>) => {
    results.push(await run());
  };
  const after = deps.policy.reconcileAfterMs;
  // What is not due yet (a hint made the payment due early, PaymentStore.hurry) is only looked up:
  // recorded when the acquirer already has its final answer, never closed or sent again.
  if (payment.inFlight) await step(() => (due(payment.inFlight!.startedAt, after, now) ? settleInFlightAttempt(deps, payment, now) : recordKnownAttempt(deps, payment)));
  else if (payment.action && (payment.status === '3ds' || payment.status === 'redirect')) {
    await step(() => (due(payment.action!.startedAt, ACTION_TIMEOUT_MS, now) ? settleAction(deps, payment, now) : recordKnownAction(deps, payment)));
  }
  if (payment.operation) {
    const op = payment.operation;
    await step(() => (due(op.startedAt, after, now) ? settleOperation(deps, payment, op) : recordKnownOperation(deps, payment, op)));
  }
  for (const [transId, refund] of Object.entries(payment.refunds ?? {})) {
    await step(() => (due(refund.startedAt, after, now) ? settleRefund(deps, payment, transId) : recordKnownRefund(deps, payment, transId)));
  }
  for (const watched of Object.values(payment.watching ?? {})) await step(() => checkLateApproval(deps, payment, watched, now));
  // The acquirer's news of a dispute: its chargebacks read and recorded.
  // The acquirer's news of a dispute, or a scheduled check for one it may not have told of: its
  // chargebacks read and recorded (on the payment read again: what the steps above recorded, an
  // approval, decides whether a chargeback fits).
  const checkDue = disputeCheckDueAt(payment);
  const scheduled = checkDue !== undefined && checkDue <= now;
  let refiledByCheck = false;
  if (disputeNewsUnread(payment) || scheduled) {
    await step(async () => {
      const { read, refiled } = await recordChargebacks(deps, payment.paymentId, scheduled);
      refiledByCheck = refiled;
      return read === 'recorded' ? 'settled' : 'released';
    });
  }
  const closesAt = closesByExpiryAt(payment);
  if (!payment.inFlight && !payment.action && closesAt && closesAt <= now) {
    await step(() => closeExpiredLink(deps, payment, now));
  }
  // A scheduled check that was all there was to do filed the payment for its next one itself.
  if (!(refiledByCheck && results.length === 1)) await requeue(deps, payment.paymentId, now);
  if (results.includes('reversed')) return 'reversed';
  if (results.includes('postponed')) return 'postponed';
  return results.includes('settled') ? 'settled' : 'released';
}

/**
 * Lookup only, for what is not due yet: the attempt's answer if the acquirer already has a final one.
 * Nothing known counts as `released` (nothing was due), as these used to be skipped.
 */
async function recordKnownAttempt(deps: ReconcileDeps, payment: Payment): Promise<ReconcileOutcome> {
  const attempt = payment.inFlight;
  if (!attempt) return 'released';
  const seen = (await askAcquirer(() => deps.acquirer.lookup(refOf(payment.paymentId, attempt.idempotencyKey)) as Promise<never>)) as AcquirerOutcome | undefined;
  if (!isFinal(seen)) return 'released';
  const recorded = await recordOutcome(deps, payment, await merchantOf(deps, payment), attempt, seen, payment.checkout ? 'sale' : 'recurring');
  return recorded.kind === 'recorded' ? 'settled' : 'postponed';
}

/** The challenge's answer if the acquirer already has a final one; the challenge stays open otherwise. */
async function recordKnownAction(deps: ReconcileDeps, payment: Payment): Promise<ReconcileOutcome> {
  const action = payment.action;
  if (!action) return 'released';
  const answer = (await askAcquirer(() => deps.acquirer.completeAction(refOf(payment.paymentId, action.idempotencyKey)) as Promise<never>)) as AcquirerOutcome | undefined;
  if (!isFinal(answer)) return 'released';
  const recorded = await recordOutcome(deps, payment, await merchantOf(deps, payment), action, answer, 'sale', 'action');
  if (recorded.kind === 'recorded' && answer.kind === 'approved') telemetry.reconciledApproval();
  return recorded.kind === 'recorded' ? 'settled' : 'postponed';
}

async function recordKnownOperation(deps: ReconcileDeps, payment: Payment, op: PendingOperation): Promise<ReconcileOutcome> {
  const seen = (await askAcquirer(() => deps.acquirer.lookup(refOf(payment.paymentId, op.idempotencyKey)) as Promise<never>)) as AcquirerOutcome | undefined;
  if (!isFinal(seen)) return 'released';
  const recorded = await recordOperation(deps, payment.paymentId, op, seen);
  return recorded.kind === 'recorded' ? (op.lateApproval && seen.kind === 'approved' ? 'reversed' : 'settled') : 'postponed';
}

async function recordKnownRefund(deps: ReconcileDeps, payment: Payment, transId: string): Promise<ReconcileOutcome> {
  const refund = payment.refunds?.[transId];
  if (!refund) return 'released';
  const seen = (await askAcquirer(() => deps.acquirer.lookup(refOf(payment.paymentId, refund.idempotencyKey)) as Promise<never>)) as AcquirerOutcome | undefined;
  if (!isFinal(seen)) return 'released';
  const recorded = await recordRefund(deps, payment.paymentId, transId, refund, seen);
  return recorded.kind === 'recorded' ? 'settled' : 'postponed';
}

async function settleInFlightAttempt(deps: ReconcileDeps, payment: Payment, now: Date): Promise<ReconcileOutcome> {
  const attempt = payment.inFlight;
  if (!attempt) return 'released';
  const type = payment.checkout ? 'sale' : 'recurring';
  const { outcome, neverReceived } = await finalAnswer(deps.acquirer, refOf(payment.paymentId, attempt.idempotencyKey));
  if (outcome && outcome.kind !== 'unknown') {
    const recorded = await recordOutcome(deps, payment, await merchantOf(deps, payment), attempt, neverReceived && outcome.kind === 'declined' ? { ...outcome, reason: INTERRUPTED_REASON } : outcome, type);
    if (recorded.kind === 'recorded' && outcome.kind === 'approved') telemetry.reconciledApproval();
    return recorded.kind === 'recorded' ? 'settled' : 'postponed';
  }
  if (!outcome && !due(attempt.startedAt, deps.policy.reconcileAfterMs + RETRY_LATER_MS, now)) return 'postponed';
  // The acquirer cannot say and cannot close it: decline it here and watch for a late approval.
  const declined = await declineLocally(deps, payment, await merchantOf(deps, payment), { attempt: attempt.attempt, transId: attempt.transId, idempotencyKey: attempt.idempotencyKey, type }, INTERRUPTED_REASON, now, 'inFlight');
  return declined ? 'released' : 'postponed';
}

async function settleAction(deps: ReconcileDeps, payment: Payment, now: Date): Promise<ReconcileOutcome> {
  const action = payment.action;
  if (!action) return 'released';
  const ref = refOf(payment.paymentId, action.idempotencyKey);
  const merchant = await merchantOf(deps, payment);
  const answer = await askAcquirer(() => deps.acquirer.completeAction(ref) as Promise<never>) as AcquirerOutcome | undefined;
  if (!isFinal(answer) && payment.checkout && Date.parse(payment.checkout.expiresAt) > now.getTime()) return 'postponed';
  // The customer left (or the link expired): close the challenge at the acquirer so it cannot be
  // answered any more; an answer given just before wins.
  const outcome = isFinal(answer) ? answer : await askAcquirer(() => deps.acquirer.close(ref) as Promise<never>) as AcquirerOutcome | undefined;
  if (isFinal(outcome)) {
    const abandoned = outcome.kind === 'declined' && !isFinal(answer);
    const recorded = await recordOutcome(deps, payment, merchant, action, abandoned ? { ...outcome, reason: ABANDONED_REASON } : outcome, 'sale', 'action');
    if (recorded.kind === 'recorded' && abandoned) telemetry.paymentAbandoned();
    if (recorded.kind === 'recorded' && outcome.kind === 'approved') telemetry.reconciledApproval();
    return recorded.kind === 'recorded' ? 'settled' : 'postponed';
  }
  if (!outcome) return 'postponed';
  if (!(await declineLocally(deps, payment, merchant, { attempt: action.attempt, transId: action.transId, idempotencyKey: action.idempotencyKey, type: 'sale' }, ABANDONED_REASON, now, 'action', action.acquirerRef))) return 'postponed';
  telemetry.paymentAbandoned();
  return 'released';
}

/**
 * A held decline whose link has expired is final: the link is closed and the decline's callback
 * queued, in one write guarded by the link being untouched since (no attempt started meanwhile).
 */
async function closeExpiredLink(deps: ReconcileDeps, payment: Payment, now: Date): Promise<ReconcileOutcome> {
  return (await deps.store.apply(payment.paymentId, closeLink(payment, 'expired', now))).applied ? 'settled' : 'postponed';
}

/** Declines an attempt the acquirer could not make final, and starts watching it for a late approval. */
async function declineLocally(
  deps: ReconcileDeps,
  payment: Payment,
  merchant: Merchant,
  attempt: Omit<WatchedAttempt, 'until'>,
  reason: string,
  now: Date,
  from: 'inFlight' | 'action',
  acquirerRef?: string,
): Promise<boolean> {
  const declined = recordLocalDecline(payment, { attempt, reason, from, ...(acquirerRef ? { acquirerRef } : {}), maxDeclines: maxDeclinesOf(merchant) }, now);
  return (await deps.store.apply(payment.paymentId, declined)).applied;
}

async function settleOperation(deps: ReconcileDeps, payment: Payment, op: PendingOperation): Promise<ReconcileOutcome> {
  const answer = await finalAnswer(deps.acquirer, refOf(payment.paymentId, op.idempotencyKey));
  // An acquirer that can neither say nor close it: ask again with the same key (it is idempotent).
  const outcome = isFinal(answer.outcome) ? answer.outcome : await sendOperation(deps.acquirer, payment, op);
  if (!isFinal(outcome)) return 'postponed';
  const recorded = await recordOperation(deps, payment.paymentId, op, outcome, answer.neverReceived ? INTERRUPTED_OPERATION_REASON : undefined);
  if (recorded.kind !== 'recorded') return 'postponed';
  return op.lateApproval && outcome.kind === 'approved' ? 'reversed' : 'settled';
}

async function settleRefund(deps: ReconcileDeps, payment: Payment, transId: string): Promise<ReconcileOutcome> {
  const refund = payment.refunds?.[transId];
  if (!refund) return 'released';
  const answer = await finalAnswer(deps.acquirer, refOf(payment.paymentId, refund.idempotencyKey));
  const outcome = isFinal(answer.outcome) ? answer.outcome : await askAcquirer(() => deps.acquirer.refund(followUpRequest(payment, refund.idempotencyKey, refund.amountMinor)));
  if (!isFinal(outcome)) return 'postponed';
  const recorded = await recordRefund(deps, payment.paymentId, transId, refund, outcome, answer.neverReceived ? INTERRUPTED_OPERATION_REASON : undefined);
  return recorded.kind === 'recorded' ? 'settled' : 'postponed';
}

/** Asks about a closed attempt; an approval is reversed at the acquirer and both are recorded. */
async function checkLateApproval(deps: ReconcileDeps, payment: Payment, watched: WatchedAttempt, now: Date): Promise<ReconcileOutcome> {
  const ref = refOf(payment.paymentId, watched.idempotencyKey);
  const expired = Date.parse(watched.until) <= now.getTime();
  let outcome = await askAcquirer(() => deps.acquirer.lookup(ref) as Promise<never>) as AcquirerOutcome | undefined;
  if (!isFinal(outcome) && expired) outcome = await askAcquirer(() => deps.acquirer.close(ref) as Promise<never>) as AcquirerOutcome | undefined;
  if (outcome?.kind === 'approved') {
    const transId = deps.ids.transId();
    const op: PendingOperation = {
      kind: 'reversal',
      transId,
      amountMinor: payment.order.amountMinor,
      idempotencyKey: operationKey(payment.paymentId, 'reversal', transId),
      startedAt: now.toISOString(),
      actor: 'system:reconcile',
      reason: LATE_REVERSAL_REASON,
      lateApproval: { ...watched, acquirerRef: outcome.acquirerRef },
    };
    const intent = await startOperation(deps, payment, (recheck, at) => startLateReversal(op, watched, recheck, at), transId);
    if (!intent.started) return 'postponed';
    // Counted once: the write above takes the attempt off the watch list.
    telemetry.reconciledApproval();
    // Sent now, as any operation this request starts (settleOperation is for one left in flight: it
    // would first close the key at the acquirer, and a reversal closed before it was sent never reverses).
    const { outcome: reversed, recorded } = await completeOperation(deps, intent.payment, op);
    if (!reversed || recorded.kind !== 'recorded') return 'postponed';
    return reversed.kind === 'approved' ? 'reversed' : 'settled';
  }
  if (outcome?.kind === 'declined' || expired) {
    return (await deps.store.apply(payment.paymentId, stopWatching(watched.attempt, now))).applied ? 'released' : 'postponed';
  }
  return 'postponed';
}

export const LATE_REVERSAL_REASON = 'Reversal of an approval that came after the attempt was declined.';

/**
 * When to look at a payment again: what is in flight when it becomes due (or, once overdue, after
 * the policy's retryLaterMs, RECONCILE_RETRY_SECONDS), so a payment looked at early for a hint keeps the time it was due at; watched
 * attempts only, every LATE_APPROVAL_CHECK_MS.
 */
export function nextLook(deps: Pick<ReconcileDeps, 'policy'>, p: Payment, now: Date): Date {
  const after = deps.policy.reconcileAfterMs;
  const at = (since: string | undefined, ms: number) => {
    const dueAt = since === undefined ? 0 : Date.parse(since) + ms;
    return dueAt > now.getTime() ? dueAt : now.getTime() + (deps.policy.retryLaterMs ?? RETRY_LATER_MS);
  };
  const times = [
    ...(p.inFlight ? [at(p.inFlight.startedAt, after)] : []),
    ...(p.action ? [at(p.action.startedAt, ACTION_TIMEOUT_MS)] : []),
    ...(p.operation ? [at(p.operation.startedAt, after)] : []),
    ...Object.values(p.refunds ?? {}).map((r) => at(r.startedAt, after)),
  ];
  return new Date(times.length ? Math.min(...times) : now.getTime() + LATE_APPROVAL_CHECK_MS);
}

/** Back in the reconcile queue while anything is left, else where the payment rests (not if something started meanwhile). */
async function requeue(deps: ReconcileDeps, paymentId: string, now: Date): Promise<void> {
  const p = await deps.store.findPayment(paymentId);
  if (p) await deps.store.apply(paymentId, refile(p, nextLook(deps, p, now), now));
}
