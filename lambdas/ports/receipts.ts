import type { ReceiptFacts } from '../domain/receipt';
import type { ShardPart } from './payments';

/**
 * A receipt waiting to be sent, sent, skipped or given up: one record per payment (its key is the
 * payment id, so a payment can have one receipt, however often it is queued).
 */
export interface ReceiptRecord {
  readonly paymentId: string;
  readonly merchantKey: string;
  /** The address as the customer gave it (normalized by receiptAddress): never logged, kept until the record's TTL. */
  readonly to: string;
  readonly facts: ReceiptFacts;
  /** The payment's language (the session's), when it named one. */
  readonly language?: string;
  readonly state: 'queued' | 'sent' | 'skipped' | 'failed';
  /** Tries made so far (a try is one SendEmail call started). */
  readonly tries: number;
  readonly queuedAt: string;
  readonly nextAttemptAt?: string;
  readonly sentAt?: string;
  /** SES's message id (or the local file's name): which message this receipt is. */
  readonly messageId?: string;
  readonly lastError?: string;
  /** Why it was not sent (a suppressed address). */
  readonly skipped?: string;
}

/** A receipt a worker holds: the record as it claimed it, and the lease its later writes are guarded by. */
export interface ClaimedReceipt {
  readonly receipt: ReceiptRecord;
  readonly lease: string;
}

export type ReceiptEnd = { readonly state: 'sent'; readonly messageId: string } | { readonly state: 'skipped'; readonly why: string } | { readonly state: 'failed'; readonly error: string };

/** Where receipts wait (lambdas/adapters/dynamodb/receipt-outbox.ts): put once, claimed, ended. */
export interface ReceiptOutbox {
  /**
   * Queues the receipt of a payment with a conditional put on its payment id: 'exists' when it was
   * queued before (by another delivery run, a retry, a crash's second run), which is not an error.
   */
  queue(receipt: Omit<ReceiptRecord, 'state' | 'tries'>, dueAt: Date): Promise<'queued' | 'exists'>;
  /** Due receipts (the work index's `receipt` queue), soonest due first. */
  due(until: Date, limit: number, part?: ShardPart): Promise<readonly { readonly paymentId: string; readonly dueAt: string }[]>;
  /**
   * Takes a due receipt for one try (conditional: queued, due, and no other worker's lease live),
   * counting the try. Undefined when it is not due or another worker holds it.
   */
  claim(paymentId: string, now: Date, leaseUntil: Date): Promise<ClaimedReceipt | undefined>;
  /** Schedules the next try; guarded by the lease (false: the lease was lost, nothing written). */
  retryAt(claimed: ClaimedReceipt, next: Date, error: string): Promise<boolean>;
  /** Ends the receipt (sent, skipped, given up); guarded by the lease, and out of the queue. */
  end(claimed: ClaimedReceipt, end: ReceiptEnd, at: Date): Promise<boolean>;
  find(paymentId: string): Promise<ReceiptRecord | undefined>;
}

/** Addresses that bounced for good or complained, by digest (domain/receipt.ts addressDigest). */
export interface MailSuppressions {
  isSuppressed(digest: string): Promise<boolean>;
  /** Records the feedback (idempotent: the same address again only counts). */
  suppress(digest: string, reason: 'bounce' | 'complaint', at: Date): Promise<void>;
}

/** One message to one address: what the mailer sends. */
export interface OutgoingMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** The payment it is the receipt of: SES tags the message with it, the local mailer names the file by it. */
  readonly paymentId: string;
}

/** A refusal the mailer knows will not change on a retry (a malformed address): the receipt is given up at once. */
export class PermanentMailError extends Error {
  override readonly name = 'PermanentMailError';
}

/** Sends mail: Amazon SES in the cloud, files in the data directory locally. */
export interface Mailer {
  /** Sends one message; its id. Throws PermanentMailError for a refusal a retry cannot change, anything else for one it may. */
  send(mail: OutgoingMail): Promise<{ readonly messageId: string }>;
}
