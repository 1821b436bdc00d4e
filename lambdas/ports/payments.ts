import type { Payment, PaymentChange, QueueEntry, Transition, TransitionGuard } from '../domain/payment';

export type { PaymentChange, QueueEntry, Transition, TransitionGuard };

/**
 * What applying a transition came to: written, with the payment as it is now; or refused because
 * its guard did not hold, with the payment as it was then (undefined when there is none).
 */
export type Applied = { readonly applied: true; readonly payment: Payment } | { readonly applied: false; readonly payment: Payment | undefined };

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
   * Stored statuses, any of them. The index holds no status: the store reads the payments its
   * entries name and keeps these, a bounded number a page (a page may come short, with a cursor).
   * A payment may read as another status than it is stored with (domain/payment-view.ts): the
   * caller checks its reading.
   */
  readonly statuses?: readonly string[];
  readonly limit: number;
  /** Where the previous page stopped (opaque to the caller). */
  readonly cursor?: string;
}

export interface PaymentStore {
  /**
   * Writes a new payment (status prepare) with its checkout link. Until a first attempt is made the
   * item carries a TTL at the link's expiry, so abandoned checkouts clean themselves up. Another
   * payment under the same id is refused; the same payment again (a retried write whose first
   * answer was lost) is already written.
   */
  createPayment(payment: Payment, queue?: QueueEntry): Promise<void>;
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
  /**
   * One conditional write whose condition is the transition's guard. A guard that does not hold is
   * an answer, not an error: `applied: false` with the payment as it is (read by the same call).
   */
  apply(paymentId: string, transition: Transition): Promise<Applied>;
  /** Several payments by id (missing ones are left out), at most 100. */
  findPayments(paymentIds: readonly string[]): Promise<Payment[]>;
  /**
   * A merchant's payments created on a UTC day (of these stored statuses, if given), newest first,
   * one page at a time: at most `limit`, and a cursor while more may follow (each entry once).
   */
  paymentsOfDay(query: DaySearch): Promise<{ payments: Payment[]; cursor?: string }>;
  /**
   * How many payments a merchant created on a UTC day: the index counted, no payment read. The
   * index holds no status: a count by status pages through paymentsOfDay.
   */
  countPaymentsOfDay(query: Omit<DaySearch, 'limit' | 'cursor' | 'statuses'>): Promise<number>;
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
