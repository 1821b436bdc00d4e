import { closesByExpiryAt } from '../attempts';
import { disputeCheckDueAt, disputeNewsUnread } from './chargebacks';
import type { Payment } from './model';
import type { QueueEntry } from './change';

/** Work queues (sparse index) a payment can be in while background work is due. */
export const QUEUES = { reconcile: 'reconcile', capture: 'capture' } as const;

/** How long an attempt may stay without an acquirer answer before reconciliation asks (the default). */
export const RECONCILE_AFTER_MS = 2 * 60_000;

/** How often a watched attempt is asked about. */
export const LATE_APPROVAL_CHECK_MS = 15 * 60_000;

/** The reconcile queue entry of an intent written now: the reconciler looks at it once its answer is overdue. */
export const reconcileEntry = (now: Date, afterMs = RECONCILE_AFTER_MS): QueueEntry => ({
  name: QUEUES.reconcile,
  dueAt: new Date(now.getTime() + afterMs).toISOString(),
});

/**
 * Where a payment waits once nothing of this change is in flight any more: an authorization in the
 * capture queue (the job works out when it is due), anything still watched or refunding in the
 * reconcile queue, a held decline there until its link expires, the rest nowhere.
 */
export function restingQueue(p: Payment, now: Date, refundsLeft = Object.keys(p.refunds ?? {}).length): QueueEntry | null {
  const watched = Object.values(p.watching ?? {});
  // News of a dispute not read yet (the acquirer could not be asked): asked again later.
  if (p.inFlight || p.action || refundsLeft > 0 || disputeNewsUnread(p)) return reconcileEntry(now);
  // A held decline becomes final when its link expires: the reconciler then reports it.
  const check = disputeCheckDueAt(p);
  const dues = [
    ...(watched.length ? [now.getTime() + LATE_APPROVAL_CHECK_MS] : []),
    ...(check ? [check.getTime()] : []),
    ...(closesByExpiryAt(p) ? [closesByExpiryAt(p)!.getTime()] : []),
  ];
  if (dues.length) return { name: QUEUES.reconcile, dueAt: new Date(Math.min(...dues)).toISOString() };
  if (p.status === 'pending') return { name: QUEUES.capture, dueAt: now.toISOString() };
  return null;
}

/** When the capture job should next look at an authorization: its automatic capture, else its expiry. */
export function nextCaptureEvent(authorizedAt: Date, delayMinutes: number | undefined, expiresAt: Date): Date {
  if (delayMinutes === undefined) return expiresAt;
  const due = new Date(authorizedAt.getTime() + delayMinutes * 60_000);
  return due < expiresAt ? due : expiresAt;
}
