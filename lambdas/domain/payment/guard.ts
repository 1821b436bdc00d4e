import type { Payment, PaymentStatus } from './model';

/**
 * The business rule a transition depends on, as data. A store turns it into the condition of one
 * conditional write (adapters/dynamodb/condition.ts), so two concurrent requests can never both
 * pass it; `guardHolds` is the same rule as a predicate, which the in-memory store decides with and
 * the store contract suite holds the DynamoDB condition to.
 */
export interface TransitionGuard {
  readonly statusIn?: readonly PaymentStatus[];
  /** The number of attempts made so far (optimistic check); 0: no attempt recorded. */
  readonly attemptIs?: number;
  /** The in-flight attempt must be this one, or there must be none. */
  readonly inFlight?: number | 'none';
  /** The pending challenge must belong to this attempt. */
  readonly actionAttempt?: number;
  /** The checkout link must still be open at this time (not expired, not closed after a decline). */
  readonly linkOpenAt?: Date;
  /** The link must not be closed yet (it may have expired). */
  readonly linkNotClosed?: boolean;
  /** The void window must still be open at this time. */
  readonly voidableAt?: Date;
  /** At most this much may be refunded or held by refunds in flight (so a new refund fits). */
  readonly refundHeldAtMost?: number;
  /** Exactly this much is refunded now (optimistic check). */
  readonly refundedIs?: number;
  /** Exactly this much is charged back now (optimistic check). */
  readonly chargedBackIs?: number;
  /** No exclusive operation may be in flight; or the one in flight must be this transaction. */
  readonly operation?: 'none' | string;
  /** This refund must be in flight. */
  readonly refundInFlight?: string;
  /** No refund may be in flight. */
  readonly noRefundsInFlight?: boolean;
  /** Exactly this many refunds are in flight (a write that takes the last one out of the queue). */
  readonly refundsInFlightCount?: number;
  /** This closed attempt must still be watched for a late approval. */
  readonly watching?: number;
  /**
   * No operation with this transaction id may have started before (a replayed request reuses its
   * id); the write records the id.
   */
  readonly newTransaction?: string;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Whether the guard holds for a payment as stored: exactly what the DynamoDB condition says (the
 * contract suite's property test checks the two against each other). A missing payment passes no
 * guard. `startedOperations` are the ids of every operation started on the payment, which a store
 * keeps beside it (`newTransaction`). The time a rule depends on is in the guard itself
 * (`linkOpenAt`, `voidableAt`), fixed when the use case decided: this reads no clock.
 */
export function guardHolds(guard: TransitionGuard, payment: Payment | undefined, startedOperations: ReadonlySet<string> = NONE): boolean {
  if (!payment) return false;
  const p = payment;
  const size = (m: object | undefined) => (m === undefined ? undefined : Object.keys(m).length);
  const checks: boolean[] = [
    guard.statusIn === undefined || guard.statusIn.includes(p.status),
    guard.attemptIs === undefined || (guard.attemptIs === 0 ? p.attempt === undefined : p.attempt === guard.attemptIs),
    guard.inFlight === undefined || (guard.inFlight === 'none' ? p.inFlight === undefined : p.inFlight?.attempt === guard.inFlight),
    guard.actionAttempt === undefined || p.action?.attempt === guard.actionAttempt,
    guard.linkOpenAt === undefined || (p.checkout !== undefined && Date.parse(p.checkout.expiresAt) > guard.linkOpenAt.getTime()),
    !(guard.linkOpenAt || guard.linkNotClosed) || p.linkClosed === undefined,
    // Compared as the stored strings are (ISO-8601 UTC sorts as time does).
    guard.voidableAt === undefined || (p.voidableUntil !== undefined && p.voidableUntil > guard.voidableAt.toISOString()),
    guard.refundHeldAtMost === undefined || p.refundHeldMinor === undefined || p.refundHeldMinor <= guard.refundHeldAtMost,
    guard.refundedIs === undefined || (guard.refundedIs === 0 ? (p.refundedMinor ?? 0) === 0 : p.refundedMinor === guard.refundedIs),
    guard.chargedBackIs === undefined || (guard.chargedBackIs === 0 ? (p.chargedBackMinor ?? 0) === 0 : p.chargedBackMinor === guard.chargedBackIs),
    guard.operation === undefined || (guard.operation === 'none' ? p.operation === undefined : p.operation?.transId === guard.operation),
    guard.refundInFlight === undefined || p.refunds?.[guard.refundInFlight] !== undefined,
    guard.refundsInFlightCount === undefined || size(p.refunds) === guard.refundsInFlightCount,
    !guard.noRefundsInFlight || !size(p.refunds),
    guard.watching === undefined || p.watching?.[String(guard.watching)] !== undefined,
    guard.newTransaction === undefined || !startedOperations.has(guard.newTransaction),
  ];
  return checks.every(Boolean);
}
