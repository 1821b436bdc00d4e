import type { EndpointHealth } from '../domain/callback';
import type { Payment, TransactionStatus, TransactionType } from '../domain/payment';

/** One POST of a callback, as the delivery log shows it. */
export interface DeliveryAttempt {
  readonly at: string;
  readonly url: string;
  /** The receiver's HTTP status; absent when there was no answer (timeout, refused connection). */
  readonly httpStatus?: number;
  readonly latencyMs: number;
  readonly error?: string;
}

/**
 * pending: waiting for its (next) attempt. delivered: a 2xx came back. dead: still failing after the
 * retry period (an operator can send it again). skipped: not sent — the merchant had no notification
 * URL, or it was passed over in turn (a ledger-only entry, or a declined attempt the customer could
 * still follow with another: see attempts.ts; it is sent once that decline is final).
 */
export type CallbackState = 'pending' | 'delivered' | 'dead' | 'skipped';

/** The delivery record of one transaction's callback. */
export interface CallbackRecord {
  readonly paymentId: string;
  readonly merchantKey: string;
  /** The transaction's position in the payment's history; callbacks are delivered in this order. */
  readonly index: number;
  readonly transId: string;
  readonly type: TransactionType;
  readonly status: TransactionStatus;
  readonly state: CallbackState;
  /** Every attempt made, including earlier rounds (before a resend). */
  readonly attemptCount: number;
  /** The most recent attempts, oldest first (bounded). */
  readonly attempts: readonly DeliveryAttempt[];
  /** The first attempt of the current round: the retry period counts from it. */
  readonly roundStartedAt?: string;
  /** Failed attempts in the current round (drives the backoff). */
  readonly roundFailures: number;
  readonly nextAttemptAt?: string;
  readonly deliveredAt?: string;
  readonly deadAt?: string;
  readonly lastError?: string;
  readonly updatedAt: string;
  /**
   * Known from the payment's delivery summary, not from a record item: a callback delivered at its
   * first attempt leaves only that (CallbackStore.release).
   */
  readonly summary?: boolean;
}

/** The callback a worker holds the lease of: no other worker delivers this payment's callbacks meanwhile. */
export interface CallbackClaim {
  readonly payment: Payment;
  readonly index: number;
  /** Sent again at an operator's request (not the next one in order). */
  readonly resend: boolean;
  readonly record?: CallbackRecord;
  /** Proof of the lease; finishing requires it to be unchanged. */
  readonly lease: string;
  /**
   * The payment's work entry is only this payment's callbacks' safety net (left by the answer that
   * made them due, for the stream dispatcher): the release that finishes the last one removes it.
   */
  readonly net?: boolean;
}

export type ReleaseResult = 'released' | 'left-outbox' | 'lost';

import type { ShardPart } from './payments';

export interface DueCallback {
  readonly paymentId: string;
  readonly merchantKey?: string;
  /** Since when its next callback is due (read from the outbox; the stream's records carry none). */
  readonly dueAt?: string;
}

export interface CallbackStore {
  /** Payments with callbacks due by `until`, oldest first, at most `limit`. */
  due(until: Date, limit: number): Promise<string[]>;
  /** The same, with the merchant each payment belongs to (its delivery lane). */
  dueEntries(until: Date, limit: number, part?: ShardPart): Promise<DueCallback[]>;
  /**
   * Takes the lease of a payment's next due callback until `leaseUntil` (one conditional write).
   * Undefined when nothing is due (or another worker holds it); a payment with nothing left leaves
   * the outbox. `fromStream`: the stream dispatcher, which takes the lease the write that made the
   * callback due left for it as it is, without a write. `keptLease`: the lease this worker kept
   * when it released the payment's previous callback (release's `keepLease`), taken as it is while
   * it lasts until `keptLease.until` at least; otherwise a new lease is written.
   */
  claim(
    paymentId: string,
    now: Date,
    leaseUntil: Date,
    options?: { readonly fromStream?: boolean; readonly keptLease?: { readonly lease: string; readonly until: Date } },
  ): Promise<CallbackClaim | undefined>;
  saveRecord(record: CallbackRecord): Promise<void>;
  /**
   * Gives the lease back: `done` moves past this callback (delivered, dead or skipped), otherwise it
   * is due again at `dueAt`. `left-outbox`: that was the payment's last due callback; `lost`: another
   * worker took over after the lease expired. `delivered`: the callback's first attempt succeeded and
   * no record item exists; the attempt is kept on the payment in the same write, as its record.
   * `keepLease`: when the callback is done and another is waiting, the lease stays on the payment
   * (no second write to take it again): the worker claims the next one with it (claim's `keptLease`).
   */
  release(
    claim: CallbackClaim,
    outcome: { readonly done: boolean; readonly dueAt: Date; readonly delivered?: DeliveryAttempt },
    options?: { readonly keepLease?: boolean },
  ): Promise<ReleaseResult>;
  records(paymentId: string): Promise<CallbackRecord[]>;
  /** A merchant's dead callbacks, oldest first, one page at a time. */
  dead(merchantKey: string, limit: number, cursor?: string): Promise<{ records: CallbackRecord[]; cursor?: string }>;
  /**
   * Queues a callback to be sent again (one conditional write on the payment). False when it is
   * already waiting to be sent, or the payment has no such transaction.
   */
  requestResend(paymentId: string, index: number, at: Date): Promise<boolean>;
  /**
   * Shows a record as waiting again after its resend was queued, if it is still as `seen` (a worker
   * may have sent it meanwhile). False when it changed.
   */
  markResendQueued(seen: CallbackRecord, at: Date): Promise<boolean>;
  endpointHealth(url: string): Promise<EndpointHealth>;
  /** Replaces the health of a URL if it is still `seen` (optimistic); false when it changed meanwhile. */
  saveEndpointHealth(url: string, seen: EndpointHealth, next: EndpointHealth): Promise<boolean>;
}

export type PostResult =
  | { readonly kind: 'answered'; readonly httpStatus: number; readonly latencyMs: number }
  | { readonly kind: 'timeout'; readonly latencyMs: number }
  | { readonly kind: 'failed'; readonly error: string; readonly latencyMs: number };

/** Sends one form-encoded POST; never throws for a receiver's failure, it reports it. */
export interface CallbackTransport {
  /** `headers`: extra request headers (the X-Checkout-Signature). */
  post(url: string, body: string, timeoutMs: number, headers?: Readonly<Record<string, string>>): Promise<PostResult>;
}
