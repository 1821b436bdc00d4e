import type { CardSummary } from '../../domain/card';

/**
 * The sandbox's test cards and triggers (protocol.md §5 plus our own; docs/sandbox.md lists them).
 * Outcomes depend only on what we may store of a card (mask and expiry) and on the amount, so the
 * sandbox never needs a full card number after the request.
 */
export const SANDBOX_TEST_PAN_MASK = '411111****1111';

/**
 * The test card numbers, each with every outcome of the expiry table (docs/sandbox.md): Visa
 * 4111 1111 1111 1111, Mastercard 5555 5555 5555 4444 and American Express 3782 822463 10005
 * (its security code has 4 digits), by their masks.
 */
export const SANDBOX_TEST_CARDS = [
  { brand: 'visa', number: '4111111111111111', mask: SANDBOX_TEST_PAN_MASK },
  { brand: 'mastercard', number: '5555555555554444', mask: '555555****4444' },
  { brand: 'amex', number: '378282246310005', mask: '378282****0005' },
] as const;
const TEST_MASKS: ReadonlySet<string> = new Set(SANDBOX_TEST_CARDS.map((c) => c.mask));

export const SANDBOX_REASONS = {
  declined: 'Declined by processing.',
  threeDsFailed: '3-D Secure authentication failed.',
  redirectFailed: 'Payment was not confirmed at the bank.',
  captureDeclined: 'Capture declined by processing.',
  voidDeclined: 'Void declined by processing.',
  refundDeclined: 'Refund declined by processing.',
  recurringDeclined: 'Recurring payment declined by processing.',
  softDeclined: 'Insufficient funds. Retry later.',
  recurringUnavailable: 'Recurring payments are not available for this card.',
  unknown: 'The acquirer did not answer in time.',
} as const;

export type AuthorizationPlan =
  | { readonly kind: 'approve' }
  | { readonly kind: 'decline'; readonly reason: string }
  | { readonly kind: 'challenge'; readonly flow: '3ds' | 'redirect'; readonly then: 'approve' | 'decline' }
  | { readonly kind: 'no-answer'; readonly later: 'approve' };

const testCard = (c: Pick<CardSummary, 'mask' | 'expMonth' | 'expYear'>, month: number) =>
  TEST_MASKS.has(c.mask) && c.expYear === 2038 && c.expMonth === month;

/** What the sandbox does with a first (customer-initiated) authorization. */
export function planAuthorization(card: Pick<CardSummary, 'mask' | 'expMonth' | 'expYear'>): AuthorizationPlan {
  if (testCard(card, 2)) return { kind: 'decline', reason: SANDBOX_REASONS.declined };
  if (testCard(card, 5)) return { kind: 'challenge', flow: '3ds', then: 'approve' };
  if (testCard(card, 6)) return { kind: 'challenge', flow: '3ds', then: 'decline' };
  if (testCard(card, 12)) return { kind: 'challenge', flow: 'redirect', then: 'approve' };
  if (testCard(card, 8)) return { kind: 'no-answer', later: 'approve' };
  return { kind: 'approve' };
}

/** Merchant-initiated charges on a stored card: only 01/38 supports them; amounts trigger declines. */
export function planRecurring(card: Pick<CardSummary, 'mask' | 'expMonth' | 'expYear'>, amountMinor: number, attempt = 1): { kind: 'approve' } | { kind: 'decline'; reason: string; soft: boolean } {
  if (!testCard(card, 1)) return { kind: 'decline', reason: SANDBOX_REASONS.recurringUnavailable, soft: false };
  if (amountMinor % 100 === 51) return { kind: 'decline', reason: SANDBOX_REASONS.recurringDeclined, soft: false };
  // A soft decline passes on retry.
  if (amountMinor % 100 === 52 && attempt === 1) return { kind: 'decline', reason: SANDBOX_REASONS.softDeclined, soft: true };
  return { kind: 'approve' };
}

export type FollowUpKind = 'capture' | 'void' | 'refund';

/** Capture, void and refund: declined for the cards that trigger it. */
export function planFollowUp(kind: FollowUpKind, card: Pick<CardSummary, 'mask' | 'expMonth' | 'expYear'>): { kind: 'approve' } | { kind: 'decline'; reason: string } {
  if (kind === 'capture' && testCard(card, 3)) return { kind: 'decline', reason: SANDBOX_REASONS.captureDeclined };
  if (kind === 'void' && testCard(card, 4)) return { kind: 'decline', reason: SANDBOX_REASONS.voidDeclined };
  if (kind === 'refund' && testCard(card, 7)) return { kind: 'decline', reason: SANDBOX_REASONS.refundDeclined };
  return { kind: 'approve' };
}

/** The code the simulated 3-D Secure page asks for. */
export const SANDBOX_OTP = '123456';
/** One-time codes a customer may type on the 3-D Secure page: a wrong one asks again, the last wrong one declines. */
export const SANDBOX_CODE_TRIES = 3;

/** The reason code of the sandbox's chargebacks unless one is given (Visa 10.4 / Mastercard 4837: no cardholder authorization). */
export const SANDBOX_CHARGEBACK_REASON = '4837';
/** How long after the money settles the chargeback test card (09/38) is charged back. */
export const SANDBOX_CHARGEBACK_AFTER_MS = 60_000;

/** The card charged back in full a minute after its money settles (a sale, or a DMS capture). */
export const chargedBackLater = (card: Pick<CardSummary, 'mask' | 'expMonth' | 'expYear'>): boolean => testCard(card, 9);
