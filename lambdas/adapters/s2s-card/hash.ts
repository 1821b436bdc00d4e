import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The S2S CARD protocol's request and callback signatures (docs/acquirers/s2s-card.md, "Hashes"):
 * md5 over the upper-cased concatenation, lowercase hex. The password never travels; only these do.
 * `digits` is the card's first six and last four digits joined (what a mask such as 411111****1111
 * keeps), so a signature never needs the full number after the request.
 */
export interface HashParty {
  /** The payer_email sent with (or stored for) the payment; '' when none was sent. */
  readonly email: string;
  /** First 6 + last 4 digits of the card number. */
  readonly digits: string;
}

const reverse = (s: string) => [...s].reverse().join('');
const md5 = (preimage: string) => createHash('md5').update(preimage.toUpperCase(), 'utf8').digest('hex');

/** First 6 + last 4 digits of a card number, or of a mask `411111****1111`. */
export function cardDigits(panOrMask: string): string {
  const digits = panOrMask.replace(/\*+/g, '');
  if (!/^\d{10,19}$/.test(digits)) throw new Error('card digits: expected a card number or a 6+4 mask');
  return `${digits.slice(0, 6)}${digits.slice(-4)}`;
}

/** Formula 1: SALE, RECURRING_SALE, RETRY. */
export const saleHash = (password: string, p: HashParty): string => md5(reverse(p.email) + password + reverse(p.digits));

/** Formula 1 with a card token in place of the card digits: SALE with `card_token`. */
export const tokenSaleHash = (password: string, email: string, cardToken: string): string => md5(reverse(email) + password + reverse(cardToken));

/** Formula 2: CAPTURE, CREDITVOID, VOID, GET_TRANS_STATUS, GET_TRANS_DETAILS and every callback. */
export const transactionHash = (password: string, p: HashParty, transId: string): string => md5(reverse(p.email) + password + transId + reverse(p.digits));

/** Formula 7: GET_TRANS_STATUS_BY_ORDER (order_id in place of trans_id). */
export const orderHash = (password: string, p: HashParty, orderId: string): string => md5(reverse(p.email) + password + orderId + reverse(p.digits));

/** Formula 8: SALE with a digital wallet token. */
export const walletHash = (password: string, email: string): string => md5(reverse(email) + password);

/** Compares a received hash with the expected one in constant time, ignoring letter case. */
export function hashMatches(received: string | undefined, expected: string): boolean {
  if (typeof received !== 'string') return false;
  const a = Buffer.from(received.toLowerCase());
  const b = Buffer.from(expected.toLowerCase());
  return a.length === b.length && timingSafeEqual(a, b);
}
