/** The payment as the domain sees it: statuses, the order it pays for, its history. */
import type { CardSummary } from '../card';
import type { WalletSummary } from '../wallet';
import type { BrowserInfo } from '../../ports/acquirer';

export const PAYMENT_STATUSES = [
  'prepare', 'settled', 'pending', '3ds', 'redirect', 'decline', 'refund', 'void', 'reversal', 'chargeback',
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const TRANSACTION_TYPES = ['sale', '3ds', 'redirect', 'capture', 'refund', 'void', 'recurring', 'chargeback', 'reversal'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export type TransactionStatus = 'success' | 'fail' | 'waiting' | 'undefined';

export interface Order {
  readonly number: string;
  /** Exactly as the merchant sent it: signatures and echoes use this. */
  readonly amount: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly description: string;
}

/**
 * The characters an order number may hold wherever a merchant sends one (session, recurring): the
 * platform's list — ASCII letters, digits and -!"#$%&'()*+,./:;@ (as `INV/2026/00001-12`, `A#1`,
 * `x:y@z`). No space, no other punctuation, no non-ASCII letter: the platform refuses them, and an
 * integration written against it never sends them.
 */
export const ORDER_NUMBER_CHARACTERS = /^[A-Za-z0-9\-!"#$%&'()*+,./:;@]+$/;

/**
 * The characters a description may hold wherever a merchant sends one (session, recurring):
 * descriptions as shops write them (`Payment Order # S00042-1 in the store http://…/`, `<b>`, `~`,
 * emoji) — any letter, mark, digit, punctuation, symbol or space separator (U+0020, U+00A0 …).
 * Refused: the other categories (Unicode `C`: control characters such as tab, newline and NEL;
 * format characters such as bidi overrides, zero-width characters, the soft hyphen and the BOM; lone
 * surrogates; private-use and unassigned code points) and the line and paragraph separators
 * U+2028/U+2029 (`Zl`, `Zp`). Those would break the one-line places a description goes (a log line, a
 * callback receiver's output, a statement) or make two descriptions look alike that sign differently.
 * It is text, never markup: wherever it is shown it is escaped for that place.
 */
export const ORDER_DESCRIPTION_CHARACTERS = /^[^\p{C}\p{Zl}\p{Zp}]+$/u;

/**
 * The customer as far as known: the session may name them (or not — `customer` is conditional on
 * the platform); a payment on the page fills in the cardholder and the e-mail typed there.
 */
export interface Customer {
  readonly name?: string;
  readonly email?: string;
}

/**
 * The customer a page attempt records: the session's name, else the cardholder name typed on the
 * card form; the session's e-mail, else the one typed on the page. A blank value is no value (as a
 * blank `customer.name` or `customer.email` in a session request is), and no key is left undefined.
 */
/**
 * What the session gave of the customer (its `given` flags): the details typed on the page in an
 * earlier attempt are not the session's, so the next attempt may replace them.
 */
export function sessionCustomer(payment: Pick<LinkPayment, 'customer' | 'checkout'>): Customer {
  const given = payment.checkout.given;
  const customer = payment.customer ?? {};
  if (!given) return customer;
  return { ...(given.name && customer.name ? { name: customer.name } : {}), ...(given.email && customer.email ? { email: customer.email } : {}) };
}

/** The session's billing address without a country the page asked for. */
export function sessionBillingAddress(payment: Pick<LinkPayment, 'billingAddress' | 'checkout'>): BillingAddress | undefined {
  const given = payment.checkout.given;
  if (!given) return payment.billingAddress ?? payment.checkout.billingAddress;
  return given.country ? payment.checkout.billingAddress : payment.checkout.billingAddress && { ...payment.checkout.billingAddress, country: undefined };
}

export function customerAfterPay(customer: Customer, typed: { readonly holder?: string; readonly email?: string }): Customer {
  const name = customer.name?.trim() || typed.holder?.trim() || undefined;
  const email = customer.email?.trim() || typed.email?.trim() || undefined;
  return { ...(name ? { name } : {}), ...(email ? { email } : {}) };
}

export interface BillingAddress {
  readonly country?: string;
  readonly state?: string;
  readonly city?: string;
  readonly address?: string;
  readonly zip?: string;
  readonly phone?: string;
}

export interface Transaction {
  readonly transId: string;
  readonly type: TransactionType;
  readonly status: TransactionStatus;
  readonly amountMinor: number;
  readonly at: string;
  readonly reason?: string;
  readonly acquirerRef?: string;
  readonly actor?: string;
  /** The payment's status right after this transaction (stamped by the store; callbacks report it). */
  readonly orderStatus?: PaymentStatus;
  /**
   * Recorded for the ledger only, never sent as a callback: an approval that came after the attempt
   * was declined (its reversal is reported instead).
   */
  readonly internal?: boolean;
  /**
   * A declined attempt on a checkout link after which the customer could still try again: its
   * callback is held (see attempts.ts) and goes out only if it turns out to be the final attempt.
   */
  readonly held?: boolean;
  /** A chargeback's dispute as the acquirer gave it (chargebacks.ts). */
  readonly dispute?: Dispute;
  /**
   * A late approval and its reversal only: what that earlier attempt paid with, when the payment's
   * card or wallet is a later attempt's (its callback names this one).
   */
  readonly paidWith?: AttemptInstrument;
}

/** What the acquirer says of a chargeback's dispute. */
export interface Dispute {
  readonly reasonCode?: string;
  readonly chargebackDate?: string;
  readonly bankDate?: string;
}

export interface Payment {
  readonly paymentId: string;
  readonly merchantKey: string;
  readonly status: PaymentStatus;
  readonly reason?: string;
  readonly order: Order;
  readonly customer: Customer;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The hosted checkout link that collects this payment; none for merchant-initiated payments. */
  readonly checkout?: Checkout;
  readonly transactions: readonly Transaction[];
  readonly recurringInit?: boolean;
  readonly scheduleId?: string;
  readonly recurringToken?: string;
  readonly recurringInitTransId?: string;
  /**
   * The merchant's own acquirer account the payment goes through (docs/acquirer-accounts.md): fixed
   * by its first attempt (a recurring charge: its chain's); the stage's own account when absent.
   */
  readonly acquirerAccount?: string;
  readonly cardToken?: string;
  readonly customData?: Record<string, string>;
  /** Attempts made on the checkout link so far (each is one authorization at the acquirer). */
  readonly attempt?: number;
  readonly declines?: number;
  /** The attempt whose acquirer answer has not been recorded yet. */
  readonly inFlight?: InFlightAttempt;
  /** The challenge or redirect the customer is completing. */
  readonly action?: PendingAction;
  readonly card?: CardSummary;
  /**
   * The wallet the last attempt paid with (Apple Pay, Google Pay) and what it disclosed of the card;
   * never its token. Such a payment has no `card`: the wallet does not disclose the card's mask and
   * expiry, and no card is stored ("virtual", docs/wallets.md).
   */
  readonly wallet?: WalletSummary;
  /** Written by attempts before customerIp was: only its `ip` is read. */
  readonly browser?: BrowserInfo;
  /** A billing address that differs from the session's (a country typed on the page); otherwise the session's is the payment's. */
  readonly billingAddress?: BillingAddress;
  /** Set when the link can no longer take a payment (paid). */
  readonly paidAt?: string;
  /** Set when a declined link can take no further attempt: its last decline is final (attempts.ts). */
  readonly linkClosed?: LinkClosure;
  /** The successful authorization at the acquirer, which captures, voids and refunds act on. */
  readonly authorization?: { readonly idempotencyKey: string; readonly acquirerRef: string };
  /** When an uncaptured authorization is released (DMS). */
  readonly authorizationExpiresAt?: string;
  /**
   * The one exclusive operation at the acquirer recorded as an intent and not answered yet (capture,
   * void, reversal). While it is in flight no other operation that moves money may start.
   */
  readonly operation?: PendingOperation;
  /** Refunds recorded as intents and not answered yet, by transaction id; they exclude a void. */
  readonly refunds?: Readonly<Record<string, PendingRefund>>;
  /**
   * Closed attempts whose acquirer could not make them final (a challenge it cannot close, a request
   * it cannot bar), by attempt number: a late approval of one of them is reversed.
   */
  readonly watching?: Readonly<Record<string, WatchedAttempt>>;
  /** The end of the void window of a settled payment (see void-window.ts). */
  readonly voidableUntil?: string;
  /** The last decline was soft: a retry may succeed. */
  readonly softDecline?: boolean;
  /** Minor units refunded so far (approved by the acquirer). */
  readonly refundedMinor?: number;
  /** Refunded plus refunds in flight: what a new refund must fit beside. */
  readonly refundHeldMinor?: number;
  /** Minor units captured of an authorization. */
  readonly capturedMinor?: number;
  /** Minor units charged back so far (the acquirer's chargebacks, chargebacks.ts). */
  readonly chargedBackMinor?: number;
  /**
   * How many times the acquirer said it has news of a dispute on this payment (a chargeback
   * notification, its report); the reconciler reads its chargebacks and sets `disputesRead` to the
   * count it read for (chargebacks.ts). A count, not a time: two notifications in one millisecond
   * are two.
   */
  readonly disputeNews?: number;
  readonly disputesRead?: number;
  /**
   * Checks of the acquirer's chargebacks made since the money settled, on the schedule of
   * DISPUTE_CHECK_DAYS (chargebacks.ts); absent: not checked (an acquirer that reports disputes itself).
   */
  readonly disputeChecks?: number;
  /** The recurring chain a merchant-initiated payment belongs to. */
  readonly recurringChainToken?: string;
  /**
   * The customer's IP (callbacks carry it): on a link, the address of the last attempt's browser; on
   * a merchant-initiated payment, that of the customer whose payment started its chain.
   */
  readonly customerIp?: string;
  /** A digest of what a merchant-initiated request asked for: a replay must ask the same. */
  readonly requestFingerprint?: string;
}

/** Why a link that saw a decline takes no further attempt. */
export interface LinkClosure {
  readonly at: string;
  readonly why: 'declines' | 'customer' | 'expired';
}

export interface SavedCard {
  readonly token: string;
  readonly brand: string;
  readonly last4: string;
  readonly expMonth: number;
  readonly expYear: number;
}

/** A payment made through a hosted checkout link. */
export type LinkPayment = Payment & { readonly checkout: Checkout };

export const hasLink = (p: Payment): p is LinkPayment => p.checkout !== undefined;

export interface InFlightAttempt {
  readonly attempt: number;
  readonly transId: string;
  readonly startedAt: string;
  readonly idempotencyKey: string;
  /** Sent as an authorization only (DMS): fixed when the attempt starts (record-outcome.ts, AttemptRef). */
  readonly authorizeOnly?: boolean;
}

export type OperationKind = 'capture' | 'void' | 'reversal';

export interface PendingOperation {
  readonly kind: OperationKind;
  readonly transId: string;
  readonly amountMinor: number;
  readonly idempotencyKey: string;
  readonly startedAt: string;
  readonly actor: string;
  /** Why a reversal is made (release by an operator, expiry, a late approval). */
  readonly reason?: string;
  /** A reversal of an approval that came after the attempt was declined: that attempt. */
  readonly lateApproval?: WatchedAttempt & { readonly acquirerRef: string };
}

export interface PendingRefund {
  readonly amountMinor: number;
  readonly idempotencyKey: string;
  readonly startedAt: string;
  readonly actor: string;
}

/** What one attempt paid with: a card's summary or a wallet's. */
export interface AttemptInstrument {
  readonly card?: CardSummary;
  readonly wallet?: WalletSummary;
}

/** The payment's card or wallet as it is now: its last attempt's. */
export const instrumentOf = (p: Pick<Payment, 'card' | 'wallet'>): AttemptInstrument => ({ ...(p.card ? { card: p.card } : {}), ...(p.wallet ? { wallet: p.wallet } : {}) });

export interface WatchedAttempt {
  readonly attempt: number;
  readonly transId: string;
  readonly idempotencyKey: string;
  readonly type: 'sale' | '3ds' | 'redirect' | 'recurring';
  /** What the attempt paid with (a later attempt may pay with another): its late approval's reversal names it. */
  readonly paidWith?: AttemptInstrument;
  /** Until when the acquirer is asked about it. */
  readonly until: string;
}

export interface PendingAction {
  readonly attempt: number;
  readonly transId: string;
  readonly flow: '3ds' | 'redirect';
  readonly url: string;
  readonly idempotencyKey: string;
  readonly acquirerRef: string;
  /** When the customer was sent to it. */
  readonly startedAt?: string;
  /** Sent as an authorization only (DMS), as the attempt was. */
  readonly authorizeOnly?: boolean;
}

/**
 * What the merchant asked of the checkout page. Stored on the payment itself, so every change of a
 * payment, from creation on, is one conditional write of one item.
 */
export interface Checkout {
  /** sha256 of the secret half of the link token; the token itself is never stored. */
  readonly secretHash: string;
  readonly operation: 'purchase';
  readonly methods?: readonly string[];
  readonly successUrl: string;
  readonly cancelUrl?: string;
  readonly expiryUrl?: string;
  readonly errorUrl?: string;
  readonly urlTarget?: string;
  /**
   * Which customer details the session itself gave: the others are the page's to ask, and stay
   * editable on every attempt (what was typed before is filled in again). Absent on older links.
   */
  readonly given?: { readonly name: boolean; readonly email: boolean; readonly country: boolean };
  /** ISO 639-1 code of the page's language, as the session gave it (lower case). */
  readonly language?: string;
  readonly reqToken: boolean;
  /** What the page shows of the saved cards (checked at session creation). */
  readonly savedCards?: readonly SavedCard[];
  readonly recurringInit: boolean;
  readonly scheduleId?: string;
  readonly billingAddress?: BillingAddress;
  readonly parameters?: Record<string, Record<string, string>>;
  readonly customData?: Record<string, string>;
  /** When the link stops accepting a payment. */
  readonly expiresAt: string;
}

/** The protocol's date format, "YYYY-MM-DD hh:mm:ss", in UTC. */
export function protocolDate(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ');
}

export const epochSeconds = (d: Date): number => Math.floor(d.getTime() / 1000);
