import { formatMinor } from '../../domain/money';
import type { Payment } from '../../domain/payment';
import { paymentReading } from '../../domain/payment-view';
import type { AuditEntry } from '../../ports/operators';
import { allowedActions, leftToRefundMinor } from '../../use-cases/admin/operator-actions';
import type { FoundPayment } from '../../use-cases/admin/search-plan';

/** A payment as the portal lists it; its status and reason as the merchant's status route reads them. */
export function paymentSummary(p: Payment, now: Date) {
  const reading = paymentReading(p, now);
  return {
    payment_id: p.paymentId,
    merchant_key: p.merchantKey,
    order_number: p.order.number,
    amount: p.order.amount,
    currency: p.order.currency,
    description: p.order.description,
    status: reading.status,
    reason: reading.reason,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    card: p.card ? { mask: p.card.mask, brand: p.card.brand, expiry: `${String(p.card.expMonth).padStart(2, '0')}/${p.card.expYear}` } : undefined,
    // A wallet payment (docs/wallets.md) has no card: the wallet, the PAN type and what it showed of the card.
    wallet: p.wallet ? { wallet: p.wallet.wallet, pan_type: p.wallet.panType, brand: p.wallet.brand, last4: p.wallet.last4 } : undefined,
    customer: p.customer,
    authorization_expires_at: p.authorizationExpiresAt,
    captured_amount: p.capturedMinor !== undefined ? formatMinor(p.capturedMinor, p.order.currency) : undefined,
    refunded_amount: p.refundedMinor ? formatMinor(p.refundedMinor, p.order.currency) : undefined,
    chargeback_amount: p.chargedBackMinor ? formatMinor(p.chargedBackMinor, p.order.currency) : undefined,
    left_to_refund: p.status === 'settled' ? formatMinor(leftToRefundMinor(p), p.order.currency) : undefined,
    voidable_until: p.voidableUntil,
    capturing: p.operation?.kind === 'capture' ? { by: p.operation.actor, since: p.operation.startedAt } : undefined,
    actions: allowedActions(p, now),
  };
}

/** A summary with the merchant's name beside its key (the portal shows names). */
export type PaymentListEntry = ReturnType<typeof paymentSummary> & { readonly merchant_name?: string };

export const listEntry = (now: Date) => (f: FoundPayment): PaymentListEntry => ({
  ...paymentSummary(f.payment, now),
  ...(f.merchantName !== undefined ? { merchant_name: f.merchantName } : {}),
});

/** A page of a search, or the capture queue: the payments listed, and the next page's cursor. */
export function paymentList(page: { readonly found: readonly FoundPayment[]; readonly now: Date; readonly cursor?: string }): { payments: PaymentListEntry[]; cursor?: string } {
  return { payments: page.found.map(listEntry(page.now)), ...(page.cursor ? { cursor: page.cursor } : {}) };
}

/** A payment, its transactions and its audit entries; amounts in decimals, like everywhere else in the portal (amountMinor stays for tools). */
export function paymentDetailView({ payment, audit, now, merchantName }: { payment: Payment; audit: AuditEntry[]; now: Date; merchantName?: string }) {
  const transactions = payment.transactions.map((t) => ({ ...t, amount: formatMinor(t.amountMinor, payment.order.currency) }));
  return { payment: { ...paymentSummary(payment, now), ...(merchantName !== undefined ? { merchant_name: merchantName } : {}) }, transactions, audit };
}
