import { createHash } from 'node:crypto';
import type { Payment, Transaction } from './payment';

/**
 * The e-mail receipt of a paid checkout (ADR 0037): which payments get one, what it says, and the
 * rules around the address. Pure: no clock, no I/O.
 */

/**
 * What a receipt shows: the fields of the page's receipt (lambdas/checkout-page/receipt.ts) and
 * nothing more. The card is its brand and last four digits only, never more of the number.
 */
export interface ReceiptFacts {
  readonly shop: string;
  readonly amountMinor: number;
  readonly currency: string;
  /** When the payment was made (ISO). */
  readonly paidAt: string;
  readonly orderNumber: string;
  readonly paymentId: string;
  readonly card?: { readonly brand: string; readonly last4: string };
}

/**
 * The transactions a receipt is sent for: the customer's approved payment on a checkout link, a
 * sale (SMS) or an authorization (DMS: `sale` type with the payment left pending). A capture later
 * charges what the receipt already showed, so it sends none; merchant-initiated charges have no page.
 */
export function earnsReceipt(payment: Pick<Payment, 'checkout'>, tx: Pick<Transaction, 'type' | 'status' | 'internal'>): boolean {
  return payment.checkout !== undefined && tx.status === 'success' && !tx.internal && (tx.type === 'sale' || tx.type === '3ds' || tx.type === 'redirect');
}

/** The receipt of a paid payment, from the payment and its shop's name as shown now. */
export function receiptFactsOf(payment: Payment, shop: string, tx: Pick<Transaction, 'at'>): ReceiptFacts {
  return {
    shop,
    amountMinor: payment.order.amountMinor,
    currency: payment.order.currency,
    paidAt: payment.paidAt ?? tx.at,
    orderNumber: payment.order.number,
    paymentId: payment.paymentId,
    ...(payment.card ? { card: { brand: payment.card.brand, last4: payment.card.mask.slice(-4) } } : {}),
    // A wallet payment (docs/wallets.md): the card's brand and the last four digits the wallet showed.
    ...(!payment.card && payment.wallet ? { card: { brand: payment.wallet.brand, last4: payment.wallet.last4 } } : {}),
  };
}

/** Bounds of an address we send to (RFC 5321: 254 characters in a path); anything else is not sent. */
const MAX_ADDRESS_LENGTH = 254;
/** One local part, one domain with a dot; no spaces, no angle brackets, no second @ (no header injection). */
const ADDRESS = /^[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+\.[^\s@<>()",;:\\]+$/;

/** The address normalized for sending and suppression (trimmed; the domain in lower case), or undefined when it is not one. */
export function receiptAddress(email: string | undefined): string | undefined {
  const trimmed = email?.trim();
  if (!trimmed || trimmed.length > MAX_ADDRESS_LENGTH || !ADDRESS.test(trimmed)) return undefined;
  const at = trimmed.lastIndexOf('@');
  return `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}`;
}

/**
 * How an address is named in logs and on the runner's console: its first character and domain
 * (`j***@example.com`). Enough to tell two customers apart in an incident, not to write to them.
 */
export function maskAddress(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  return `${email[0]}***@${email.slice(at + 1)}`;
}

/**
 * The key of an address's suppression: SHA-256 of it in lower case. Bounces and complaints name the
 * address; we keep only the digest, so the suppression list holds no addresses and still matches.
 */
export function addressDigest(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/** What SES tells us of a message, as far as receipts care. */
export type MailFeedback = { readonly kind: 'bounce'; readonly permanent: boolean; readonly recipients: readonly string[] } | { readonly kind: 'complaint'; readonly recipients: readonly string[] };

/**
 * Whether feedback suppresses its recipients: a permanent bounce (the address does not exist) and a
 * complaint (the customer marked it spam) do; a transient bounce (mailbox full) does not.
 */
export const suppresses = (feedback: MailFeedback): boolean => feedback.kind === 'complaint' || feedback.permanent;

/**
 * How often a receipt is tried and how long it waits between tries: 8 tries over about two hours
 * (1, 2, 4 … 64 minutes, equal jitter), then it is given up (ReceiptsFailed).
 */
export const RECEIPT_RETRY = { tries: 8, firstDelayMs: 60_000, maxDelayMs: 64 * 60_000, jitter: 'equal' } as const;

/**
 * How long a worker holds a receipt it is sending: longer than the send may take (the SDK's own
 * timeouts), so a crashed worker's receipt is taken over after it, and only after it.
 */
export const RECEIPT_LEASE_MS = 2 * 60_000;

/** How long a receipt's record (and the address on it) stays once it is sent, skipped or given up: then DynamoDB's TTL removes it. */
export const RECEIPT_KEPT_DAYS = 30;
