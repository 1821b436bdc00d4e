/**
 * Server-to-server callbacks (protocol.md §4): what is sent for a transaction, how it is signed,
 * when a failed delivery is tried again and when a notification URL is blocked. Pure: the caller
 * passes the time and the randomness.
 */
import { expirationDate } from './card';
import { signFields, verifyFields } from './hash';
import { formatMinor } from './money';
import { protocolDate, type Payment, type Transaction } from './payment';
import { retryDelayMs as delayOf } from './retry-policy';

export interface CallbackPolicy {
  /** How long one POST may take before it counts as a timeout. */
  readonly timeoutMs: number;
  /** First retry delay; each further failure doubles it, up to `maxDelayMs`. */
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  /** A callback still failing this long after its first attempt is dead (visible, resendable). */
  readonly retryForMs: number;
  /** `blockAfterTimeouts` timeouts within `timeoutWindowMs` block the URL for `blockForMs`. */
  readonly blockAfterTimeouts: number;
  readonly timeoutWindowMs: number;
  readonly blockForMs: number;
  /** Delivery attempts kept per callback (the oldest are dropped; the count is kept). */
  readonly attemptsKept: number;
}

export const CALLBACK_POLICY: CallbackPolicy = {
  timeoutMs: 10_000,
  firstDelayMs: 30_000,
  maxDelayMs: 3_600_000,
  retryForMs: 24 * 3_600_000,
  blockAfterTimeouts: 5,
  timeoutWindowMs: 5 * 60_000,
  blockForMs: 15 * 60_000,
  attemptsKept: 50,
};

/**
 * The delay before retry number `failures` (1 after the first failed attempt), by the one retry
 * policy (domain/retry-policy.ts): exponential, capped, with "equal jitter" (half fixed, half random)
 * so receivers coming back from an outage are not hit by every sender at the same instant, yet no
 * retry comes sooner than half its nominal delay. Bounded by time (retryForMs), not by a count.
 */
export function retryDelayMs(failures: number, random: number, policy: CallbackPolicy = CALLBACK_POLICY): number {
  return delayOf({ firstDelayMs: policy.firstDelayMs, maxDelayMs: policy.maxDelayMs, jitter: 'equal' }, failures, random);
}

/** A failed callback is dead once it has been tried for the whole retry period. */
export const retriesExhausted = (firstAttemptAt: Date, now: Date, policy: CallbackPolicy = CALLBACK_POLICY): boolean =>
  now.getTime() - firstAttemptAt.getTime() >= policy.retryForMs;

/** What we remember of a notification URL: its recent timeouts and whether it is blocked. */
export interface EndpointHealth {
  /** ISO times of the most recent timeouts, oldest first, at most `blockAfterTimeouts`. */
  readonly timeouts: readonly string[];
  readonly blockedUntil?: string;
  /**
   * Until when the URL counts as slow (an answer took longer than SLOW_ANSWER_MS): the stream's fast
   * path leaves its callbacks to the relay, whose lanes keep it from holding up other merchants.
   */
  readonly slowUntil?: string;
}

/** An answer slower than this marks its URL slow for SLOW_FOR_MS. */
export const SLOW_ANSWER_MS = 3_000;
export const SLOW_FOR_MS = 10 * 60_000;

export const isSlow = (health: EndpointHealth, now: Date): boolean =>
  health.slowUntil !== undefined && Date.parse(health.slowUntil) > now.getTime();

/** The health after an answer that took `latencyMs`; the same object when nothing changes (no write). */
export function afterAnswer(health: EndpointHealth, latencyMs: number, now: Date): EndpointHealth {
  const slow = latencyMs > SLOW_ANSWER_MS;
  if (slow) return { ...health, slowUntil: new Date(now.getTime() + SLOW_FOR_MS).toISOString() };
  if (health.slowUntil === undefined) return health;
  const { slowUntil: _gone, ...rest } = health;
  return rest;
}

export const HEALTHY_ENDPOINT: EndpointHealth = { timeouts: [] };

export const isBlocked = (health: EndpointHealth, now: Date): boolean =>
  health.blockedUntil !== undefined && Date.parse(health.blockedUntil) > now.getTime();

/** Records a timeout; the fifth within five minutes blocks the URL for fifteen (and starts a new count). */
export function afterTimeout(health: EndpointHealth, now: Date, policy: CallbackPolicy = CALLBACK_POLICY): EndpointHealth {
  const windowStart = now.getTime() - policy.timeoutWindowMs;
  const recent = [...health.timeouts.filter((t) => Date.parse(t) > windowStart), now.toISOString()].slice(-policy.blockAfterTimeouts);
  if (recent.length >= policy.blockAfterTimeouts) {
    return { timeouts: [], blockedUntil: new Date(now.getTime() + policy.blockForMs).toISOString() };
  }
  return { timeouts: recent, ...(isBlocked(health, now) ? { blockedUntil: health.blockedUntil } : {}), ...(health.slowUntil ? { slowUntil: health.slowUntil } : {}) };
}

/** The callback hash: the same formula as the return parameters (protocol.md §1). */
export const callbackHash = (payment: Payment, password: string): string =>
  signFields([payment.paymentId, payment.order.number, payment.order.amount, payment.order.currency, payment.order.description], password);

/** The check a merchant's server makes on a callback it received (its form fields). */
export const verifyCallbackHash = (fields: Readonly<Record<string, string>>, password: string): boolean =>
  verifyFields(fields.hash, ['id', 'order_number', 'order_amount', 'order_currency', 'order_description'].map((f) => fields[f] ?? ''), password);

/**
 * The fields of one transaction's callback, in the platform's order. `order_status` is the payment's
 * status right after this transaction, so a callback delivered late still tells what happened then.
 * `trans_id` and `amount` (the transaction's own amount: a partial refund or capture) are our
 * additions; receivers written for the platform ignore them.
 */
export function callbackFields(payment: Payment, tx: Transaction, password: string): [string, string][] {
  // The transaction's own attempt's card or wallet when a later attempt's replaced them on the payment (a late approval's reversal).
  const paidWith = tx.paidWith ?? payment;
  const fields: [string, string | undefined][] = [
    ['id', payment.paymentId],
    ['order_number', payment.order.number],
    ['order_amount', payment.order.amount],
    ['order_currency', payment.order.currency],
    ['order_description', payment.order.description],
    ['order_status', tx.orderStatus ?? payment.status],
    ['type', tx.type],
    ['status', tx.status],
    ['reason', tx.reason],
    ['trans_id', tx.transId],
    ['amount', formatMinor(tx.amountMinor, payment.order.currency)],
    ['card', paidWith.card?.mask],
    ['card_expiration_date', paidWith.card ? expirationDate(paidWith.card) : undefined],
    ['card_token', payment.cardToken],
    // A wallet payment (docs/wallets.md): which wallet, and whether the card number behind the token
    // is a device's (dpan) or the card's own (fpan); card and card_expiration_date are not known then.
    ['digital_wallet', paidWith.wallet?.wallet],
    ['pan_type', paidWith.wallet?.panType],
    ['recurring_init_trans_id', payment.recurringInitTransId],
    ['recurring_token', payment.recurringToken],
    ['schedule_id', payment.scheduleId],
    ['customer_name', payment.customer.name || undefined],
    ['customer_email', payment.customer.email],
    // Required by the platform on every callback: a merchant-initiated payment carries its chain's.
    ['customer_ip', payment.customerIp ?? payment.browser?.ip],
    ['date', protocolDate(tx.at)],
    ...Object.entries(payment.customData ?? payment.checkout?.customData ?? {}).map(([k, v]): [string, string] => [`custom_data[${k}]`, v]),
    ['hash', callbackHash(payment, password)],
  ];
  return fields.filter((f): f is [string, string] => f[1] !== undefined);
}

/** application/x-www-form-urlencoded, UTF-8, in the given order. */
export const encodeForm = (fields: readonly (readonly [string, string])[]): string => new URLSearchParams(fields as [string, string][]).toString();
