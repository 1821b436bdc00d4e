import type { Payment, PaymentStatus, PendingRefund, Transaction, WatchedAttempt } from '../domain/payment';

/**
 * The business rule a transition depends on. The store turns it into the condition of a single
 * conditional write, so two concurrent requests can never both pass it.
 */
export interface TransitionGuard {
  readonly statusIn?: readonly PaymentStatus[];
  /** The number of attempts made so far (optimistic check). */
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

/** What a transition changes; history is appended in the same write that changes the status. */
export interface PaymentChange {
  readonly set: Partial<Omit<Payment, 'paymentId' | 'merchantKey' | 'transactions' | 'createdAt'>> & { readonly updatedAt: string };
  readonly remove?: readonly ('inFlight' | 'action' | 'reason' | 'operation' | 'voidableUntil' | 'browser' | 'billingAddress')[];
  /** Atomic additions (negative to subtract); an absent attribute counts as 0. */
  readonly add?: Partial<Record<'refundHeldMinor' | 'refundedMinor', number>>;
  /** Puts a refund in flight, or takes one out. */
  readonly refund?: { readonly put: [string, PendingRefund] } | { readonly delete: string };
  /** Starts or stops watching a closed attempt for a late approval. */
  readonly watch?: { readonly put: WatchedAttempt } | { readonly delete: number };
  readonly append?: readonly Transaction[];
  /** Puts the payment in a work queue (sparse index) or takes it out (null). */
  readonly queue?: { readonly name: string; readonly dueAt: string } | null;
  /** Keeps the item for good: an attempted payment is never removed by TTL. */
  readonly keep?: boolean;
  /**
   * Queues the callback of the transaction at this position to be sent (again), in the same write:
   * a held decline that this change makes final.
   */
  readonly sendCallback?: number;
}

export class TransitionRejected extends Error {
  override readonly name = 'TransitionRejected';
}

export interface QueuedPayment {
  readonly paymentId: string;
  readonly dueAt: string;
}

/** A part of a sharded index: the shards whose number modulo `of` is `index` (one worker's share). */
export interface ShardPart {
  readonly index: number;
  readonly of: number;
}

export interface DaySearch {
  readonly merchantKey: string;
  /** YYYY-MM-DD, UTC. */
  readonly day: string;
  /**
   * Stored statuses, any of them (the index carries the stored status). A payment may read as
   * another status than it is stored with (domain/payment-view.ts): the caller checks its reading.
   */
  readonly statuses?: readonly string[];
  readonly limit: number;
  /** Where the previous page stopped (opaque to the caller). */
  readonly cursor?: string;
}

export interface PaymentStore {
  /**
   * Writes a new payment (status prepare) with its checkout link. Until a first attempt is made the
   * item carries a TTL at the link's expiry, so abandoned checkouts clean themselves up.
   */
  createPayment(payment: Payment, queue?: { readonly name: string; readonly dueAt: string }): Promise<void>;
  findPayment(paymentId: string): Promise<Payment | undefined>;
  /**
   * What is left of a link DynamoDB's TTL removed unpaid (its state item is gone): its details.
   * The table's stream reports the removal; nothing else deletes.
   */
  forgetExpiredLink(paymentId: string): Promise<void>;
  /** Every payment of a merchant's order number, newest first, at most `limit`. */
  paymentsByOrder(merchantKey: string, orderNumber: string, limit: number): Promise<Payment[]>;
  /** The most recent payment of a merchant's order number. */
  findLatestPaymentByOrder(merchantKey: string, orderNumber: string): Promise<Payment | undefined>;
  /** One conditional write; throws TransitionRejected when the guard does not hold. Returns the new state. */
  transition(paymentId: string, guard: TransitionGuard, change: PaymentChange): Promise<Payment>;
  /** Several payments by id (missing ones are left out), at most 100. */
  findPayments(paymentIds: readonly string[]): Promise<Payment[]>;
  /** A merchant's payments created on a UTC day (of one status, if given), newest first, one page at a time. */
  paymentsOfDay(query: DaySearch): Promise<{ payments: Payment[]; cursor?: string }>;
  /** How many payments a merchant created on a UTC day (of these stored statuses, if given): the index counted, no payment read. */
  countPaymentsOfDay(query: Omit<DaySearch, 'limit' | 'cursor'>): Promise<number>;
  /**
   * Every payment in a work queue whose time has come, in batches (each about `pageSize` per shard,
   * soonest due first within a batch), until none is left: what a draining job reads.
   */
  dueBatches(queue: string, until: Date, pageSize: number, part?: ShardPart): AsyncIterable<QueuedPayment[]>;
  /** Payments in a work queue whose time has come, oldest first, at most `limit`. */
  due(queue: string, until: Date, limit: number): Promise<QueuedPayment[]>;
  /**
   * Makes a payment that waits in a queue due at `dueAt` when it is due later (an acquirer's hint
   * that something in flight has an answer); a payment in another queue or in none is left alone.
   * Changes nothing else; true when it moved.
   */
  hurry(paymentId: string, queue: string, dueAt: Date): Promise<boolean>;
}
