import type { Payment, PendingRefund, Transaction, WatchedAttempt } from './model';
import type { TransitionGuard } from './guard';

/** A work queue entry: the payment is due in this queue (reconcile, capture) at this time. */
export interface QueueEntry {
  readonly name: string;
  readonly dueAt: string;
}

/** What a transition changes; history is appended in the same write that changes the status. */
export interface PaymentChange {
  readonly set: Partial<Omit<Payment, 'paymentId' | 'merchantKey' | 'transactions' | 'createdAt'>> & { readonly updatedAt: string };
  readonly remove?: readonly ('inFlight' | 'action' | 'reason' | 'operation' | 'voidableUntil' | 'browser' | 'billingAddress' | 'card' | 'wallet' | 'acquirerAccount')[];
  /** Atomic additions (negative to subtract); an absent attribute counts as 0. */
  readonly add?: Partial<Record<'refundHeldMinor' | 'refundedMinor' | 'chargedBackMinor' | 'disputeNews', number>>;
  /** Puts a refund in flight, or takes one out. */
  readonly refund?: { readonly put: [string, PendingRefund] } | { readonly delete: string };
  /** Starts or stops watching a closed attempt for a late approval. */
  readonly watch?: { readonly put: WatchedAttempt } | { readonly delete: number };
  readonly append?: readonly Transaction[];
  /** Puts the payment in a work queue (sparse index) or takes it out (null). */
  readonly queue?: QueueEntry | null;
  /** Keeps the item for good: an attempted payment is never removed by TTL. */
  readonly keep?: boolean;
  /**
   * Queues the callback of the transaction at this position to be sent (again), in the same write:
   * a held decline that this change makes final.
   */
  readonly sendCallback?: number;
}

/** One state change of a payment: the rule it needs (one conditional write's condition) and what it changes. */
export interface Transition {
  readonly guard: TransitionGuard;
  readonly change: PaymentChange;
}

/**
 * Every appended transaction carries the status it left the payment in (its callback reports it),
 * so a change that appends one must say that status, even when it keeps the current one.
 */
export function stamped(change: PaymentChange): Transaction[] {
  const status = change.set.status;
  if (!change.append?.length) return [];
  if (!status) throw new Error('a change that appends a transaction must set the resulting status');
  return change.append.map((t) => ({ ...t, orderStatus: status }));
}

/**
 * The payment after a change, as a store that applied it reads it back. What the change does to
 * the store's own bookkeeping (its queue entry, the callback outbox, the TTL) is not part of the
 * payment and is the store's to do.
 */
export function applyChange(payment: Payment, change: PaymentChange): Payment {
  const next: Record<string, unknown> = { ...payment };
  for (const [attr, v] of Object.entries(change.set)) if (v !== undefined) next[attr] = v;
  const appended = stamped(change);
  if (appended.length) next.transactions = [...payment.transactions, ...appended];
  for (const [attr, n] of Object.entries(change.add ?? {})) {
    if (n !== undefined && n !== 0) next[attr] = ((next[attr] as number | undefined) ?? 0) + n;
  }
  if (change.refund) {
    const refunds = { ...(payment.refunds ?? {}) };
    if ('put' in change.refund) refunds[change.refund.put[0]] = change.refund.put[1];
    else delete refunds[change.refund.delete];
    next.refunds = refunds;
  }
  if (change.watch) {
    const watching = { ...(payment.watching ?? {}) };
    if ('put' in change.watch) watching[String(change.watch.put.attempt)] = change.watch.put;
    else delete watching[String(change.watch.delete)];
    next.watching = watching;
  }
  for (const attr of change.remove ?? []) delete next[attr];
  return next as unknown as Payment;
}
