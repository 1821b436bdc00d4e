import { receiptMail } from '../checkout-page/receipt-mail';
import { inParallel } from '../domain/parallel';
import {
  RECEIPT_LEASE_MS,
  RECEIPT_RETRY,
  addressDigest,
  maskAddress,
  receiptAddress,
} from '../domain/receipt';
import { retryDelayMs } from '../domain/retry-policy';
import { logger } from '../observability/logger';
import { telemetry } from '../observability/telemetry';
import type { Clock } from '../ports/clock';
import type { ShardPart } from '../ports/payments';
import { PermanentMailError, type ClaimedReceipt, type Mailer, type MailSuppressions, type ReceiptOutbox } from '../ports/receipts';

/**
 * Sending e-mail receipts (ADR 0037): queued by queue-receipt.ts, sent by the receipt job one lease
 * per try, skipped for addresses SES's feedback suppressed.
 */

export interface ReceiptDeps {
  readonly receipts: ReceiptOutbox;
  readonly suppressions: MailSuppressions;
  readonly mailer: Mailer;
  readonly clock: Clock;
  /** In [0, 1): the jitter of retry delays. */
  readonly random: () => number;
}

export type SendOutcome = 'sent' | 'suppressed' | 'retrying' | 'failed' | 'busy';

export interface ReceiptReport {
  examined: number;
  sent: number;
  suppressed: number;
  retrying: number;
  failed: number;
  /** Due, but another worker held it (or had just ended it). */
  busy: number;
  errors: string[];
}

/**
 * Receipts a run sends at once. SES's sending rate of a new production account is 14 a second; a
 * faster burst is answered with throttling, which the SDK retries with backoff (3 attempts) and, past
 * that, the receipt's next try does (RECEIPT_RETRY): a burst costs time, never a receipt.
 */
export const RECEIPT_CONCURRENCY = 4;
/** Due receipts a run reads: bounded; a backlog larger than this waits for the next tick. */
export const RECEIPTS_PER_RUN = 500;

/**
 * One try of one receipt: claim it (a conditional write that also counts the try and makes it due
 * again when the lease ends), skip it when its address is suppressed, send it, and record the end
 * under the lease. A crash after SES accepted the message and before the end is written leaves the
 * receipt to come due again when the lease ends, and it is sent once more: SendEmail has no
 * idempotency key, so "at most one extra copy per crash" is the bound, not "exactly once".
 */
export async function sendReceipt(deps: ReceiptDeps, paymentId: string): Promise<SendOutcome> {
  const now = deps.clock.now();
  const claimed = await deps.receipts.claim(paymentId, now, new Date(now.getTime() + RECEIPT_LEASE_MS));
  if (!claimed) return 'busy';
  const { receipt } = claimed;
  const masked = maskAddress(receipt.to);
  if (await deps.suppressions.isSuppressed(addressDigest(receipt.to))) {
    await deps.receipts.end(claimed, { state: 'skipped', why: 'The address bounced or complained before.' }, deps.clock.now());
    telemetry.receipt('suppressed');
    logger.info('receipt skipped: suppressed address', { payment_id: paymentId, to: masked });
    return 'suppressed';
  }
  const mail = receiptMail(receipt.facts, receipt.language);
  let messageId: string;
  try {
    ({ messageId } = await deps.mailer.send({ to: receipt.to, subject: mail.subject, text: mail.text, html: mail.html, paymentId }));
  } catch (e) {
    return tryFailed(deps, claimed, e as Error, masked);
  }
  // Sent: a failure to record it is no failure to send (it throws, and the receipt comes due again
  // when the lease ends: the one extra copy a crash here may cost).
  const recorded = await deps.receipts.end(claimed, { state: 'sent', messageId }, deps.clock.now());
  telemetry.receipt('sent');
  // Not recorded: the lease ran out while SES took its time, and another try may send it again.
  if (!recorded) logger.warn('receipt sent but its lease had ended', { payment_id: paymentId, to: masked });
  else logger.info('receipt sent', { payment_id: paymentId, to: masked, language: mail.language });
  return 'sent';
}

async function tryFailed(deps: ReceiptDeps, claimed: ClaimedReceipt, error: Error, masked: string): Promise<SendOutcome> {
  const { receipt } = claimed;
  const reason = `${error.name}: ${error.message}`.replace(/[^\s@]+@[^\s@]+/g, '[address]');
  if (error instanceof PermanentMailError || receipt.tries >= RECEIPT_RETRY.tries) {
    await deps.receipts.end(claimed, { state: 'failed', error: reason }, deps.clock.now());
    telemetry.receipt('failed');
    logger.error('receipt given up', { payment_id: receipt.paymentId, to: masked, tries: receipt.tries, error: error.name });
    return 'failed';
  }
  const next = new Date(deps.clock.now().getTime() + retryDelayMs(RECEIPT_RETRY, receipt.tries, deps.random()));
  await deps.receipts.retryAt(claimed, next, reason);
  telemetry.receipt('retried');
  logger.warn('receipt send failed; tried again later', { payment_id: receipt.paymentId, to: masked, tries: receipt.tries, next: next.toISOString(), error: error.name });
  return 'retrying';
}

/** The receipt job: every due receipt of this worker's shards, RECEIPT_CONCURRENCY at a time, until the run's time is spent. */
export async function sendDueReceipts(deps: ReceiptDeps, options: { readonly part?: ShardPart; readonly stopAt?: number; readonly limit?: number } = {}): Promise<ReceiptReport> {
  const report: ReceiptReport = { examined: 0, sent: 0, suppressed: 0, retrying: 0, failed: 0, busy: 0, errors: [] };
  const now = deps.clock.now();
  const due = await deps.receipts.due(now, options.limit ?? RECEIPTS_PER_RUN, options.part);
  const outcomeKey = { sent: 'sent', suppressed: 'suppressed', retrying: 'retrying', failed: 'failed', busy: 'busy' } as const;
  await inParallel([...due], RECEIPT_CONCURRENCY, async ({ paymentId }) => {
    if (options.stopAt !== undefined && Date.now() >= options.stopAt) return;
    report.examined++;
    try {
      report[outcomeKey[await sendReceipt(deps, paymentId)]]++;
    } catch (e) {
      // A store failure: the receipt stays queued and comes due again when its lease ends.
      if (report.errors.length < 5) report.errors.push(`${paymentId}: ${(e as Error).name}`);
    }
  });
  // The first is the soonest due of every shard read: how long the backlog has waited.
  telemetry.backlog('receipts', due[0]?.dueAt, now);
  return report;
}
