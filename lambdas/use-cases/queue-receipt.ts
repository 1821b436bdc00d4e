import { earnsReceipt, receiptAddress, receiptFactsOf } from '../domain/receipt';
import type { Payment, Transaction } from '../domain/payment';
import { telemetry } from '../observability/telemetry';
import type { Clock } from '../ports/clock';
import type { Merchant } from '../ports/merchants';
import type { ReceiptOutbox } from '../ports/receipts';

/**
 * Queueing an e-mail receipt (ADR 0037). A receipt is queued by the callback delivery of the
 * payment's approved transaction (the outbox of ADR 0015 brings every committed transaction there
 * at least once, after the customer's request), with a conditional put keyed by the payment id: one
 * receipt per payment however often that runs. Kept apart from the sending (receipts.ts), so the
 * callback functions bundle no mail rendering.
 */

export type QueueOutcome = 'queued' | 'exists' | 'off' | 'no-address';

/**
 * Queues the receipt of an approved checkout payment when its merchant sends receipts and the
 * payment has the customer's e-mail. Throws what the store throws: the delivery run then fails and
 * runs again, so a receipt is never lost to a failed write.
 */
export async function queueReceipt(
  deps: { readonly receipts: ReceiptOutbox; readonly clock: Clock },
  payment: Payment,
  tx: Transaction,
  merchant: Pick<Merchant, 'name' | 'emailReceipts'> | undefined,
): Promise<QueueOutcome> {
  if (!merchant?.emailReceipts || !earnsReceipt(payment, tx)) return 'off';
  const to = receiptAddress(payment.customer?.email);
  if (!to) return 'no-address';
  const outcome = await deps.receipts.queue(
    {
      paymentId: payment.paymentId,
      merchantKey: payment.merchantKey,
      to,
      facts: receiptFactsOf(payment, merchant.name, tx),
      queuedAt: deps.clock.now().toISOString(),
      ...(payment.checkout?.language ? { language: payment.checkout.language } : {}),
    },
    deps.clock.now(),
  );
  if (outcome === 'queued') telemetry.receipt('queued');
  return outcome;
}

