import type { Payment } from '../domain/payment';
import type { Acquirer } from '../ports/acquirer';
import type { MerchantDirectory } from '../ports/merchants';
import { TransitionRejected } from '../ports/payments';
import { merchantOf } from './checkout';
import { QUEUES, recordOutcome, type RecordDeps } from './record-outcome';
import { drainDue, type QueueReport } from './work-queue';

/** At most this many payments per run: a run stays well inside one Lambda timeout. */
export const RECONCILE_BATCH = 25;
const RETRY_LATER_MS = 5 * 60_000;
export const INTERRUPTED_REASON = 'The payment attempt was interrupted before the acquirer received it.';
export const ABANDONED_REASON = 'The customer did not complete the confirmation.';

export interface ReconcileDeps extends RecordDeps {
  readonly acquirer: Acquirer;
  readonly merchants: MerchantDirectory;
}

export type ReconcileReport = QueueReport<'settled' | 'released' | 'postponed'>;

/**
 * Settles attempts left without an answer (a crash between the acquirer call and our write, an
 * acquirer timeout, a customer who left a 3-D Secure challenge): asks the acquirer by idempotency
 * key and records its answer with the same guarded write the page uses, so a late page request and
 * this job can never both record it.
 */
export function reconcileDue(deps: ReconcileDeps, limit = RECONCILE_BATCH): Promise<ReconcileReport> {
  return drainDue(deps, QUEUES.reconcile, limit, ['settled', 'released', 'postponed'], (payment, now) => reconcileOne(deps, payment, now));
}

async function reconcileOne(deps: ReconcileDeps, payment: Payment, now: Date): Promise<'settled' | 'released' | 'postponed'> {
  const merchant = await merchantOf(deps, payment);
  const at = now.toISOString();
  const later = { name: QUEUES.reconcile, dueAt: new Date(now.getTime() + RETRY_LATER_MS).toISOString() };
  try {
    if (payment.inFlight) {
      const attempt = payment.inFlight;
      const outcome = await deps.acquirer.lookup(attempt.idempotencyKey);
      if (!outcome) {
        await deps.store.transition(payment.paymentId, { inFlight: attempt.attempt }, {
          set: { status: 'decline', reason: INTERRUPTED_REASON, updatedAt: at },
          remove: ['inFlight'],
          append: [{ transId: attempt.transId, type: payment.checkout ? 'sale' : 'recurring', status: 'fail', amountMinor: payment.order.amountMinor, at, reason: INTERRUPTED_REASON }],
          queue: null,
        });
        return 'released';
      }
      if (outcome.kind === 'unknown') {
        await deps.store.transition(payment.paymentId, { inFlight: attempt.attempt }, { set: { updatedAt: at }, queue: later });
        return 'postponed';
      }
      const recorded = await recordOutcome(deps, payment, merchant, attempt, outcome, payment.checkout ? 'sale' : 'recurring');
      return recorded.kind === 'recorded' ? 'settled' : 'postponed';
    }
    if (payment.action && (payment.status === '3ds' || payment.status === 'redirect')) {
      const action = payment.action;
      const outcome = await deps.acquirer.completeAction(action.idempotencyKey);
      if (outcome.kind === 'action' || outcome.kind === 'unknown') {
        if (payment.checkout && Date.parse(payment.checkout.expiresAt) > now.getTime()) {
          await deps.store.transition(payment.paymentId, { actionAttempt: action.attempt, statusIn: [payment.status] }, { set: { updatedAt: at }, queue: later });
          return 'postponed';
        }
        await deps.store.transition(payment.paymentId, { actionAttempt: action.attempt, statusIn: [payment.status] }, {
          set: { status: 'decline', reason: ABANDONED_REASON, declines: (payment.declines ?? 0) + 1, updatedAt: at },
          remove: ['action'],
          append: [{ transId: action.transId, type: action.flow, status: 'fail', amountMinor: payment.order.amountMinor, at, reason: ABANDONED_REASON, acquirerRef: action.acquirerRef }],
          queue: null,
        });
        return 'released';
      }
      const recorded = await recordOutcome(deps, payment, merchant, action, outcome, action.flow);
      return recorded.kind === 'recorded' ? 'settled' : 'postponed';
    }
    // Nothing pending any more (the page finished first): just leave the queue.
    await deps.store.transition(payment.paymentId, { inFlight: 'none' }, { set: { updatedAt: payment.updatedAt }, queue: null });
    return 'released';
  } catch (e) {
    if (e instanceof TransitionRejected) return 'postponed';
    throw e;
  }
}
