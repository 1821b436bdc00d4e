import type { ValidCard } from '../../domain/card';
import { isKnownCurrency } from '../../domain/money';
import type { FollowUpRequest } from '../../ports/acquirer';
import type { CardFacts, LedgerEntry } from './ledger';
import { SANDBOX_CODE_TRIES, SANDBOX_OTP, SANDBOX_REASONS, planAuthorization, planFollowUp, planRecurring } from './rules';

/**
 * The simulated bank: what the sandbox answers, decided from what it may keep of a card (mask and
 * expiry, rules.ts), the amount, and an authorization's balances as read. Pure: no I/O, no clock, no
 * randomness; the connector (sandbox-acquirer.ts) brings what it read and the ledger store
 * (ledger-store.ts) turns each decision into one conditional write whose condition is `guardHolds`.
 */

/** The follow-ups the sandbox records; `reversal` releases an authorization or reverses a whole sale. */
export type SandboxFollowUp = 'capture' | 'void' | 'refund' | 'reversal';

export const SANDBOX_CLOSED_REASONS = {
  /** A key closed before any request with it arrived; a late request with it gets this answer. */
  neverReceived: 'Closed before it was received.',
  /** A challenge or redirect closed while the customer had not answered it. */
  abandoned: 'The customer did not complete the confirmation.',
} as const;

/** Why the sandbox refuses a request that would move money wrongly (it declines; it never throws). */
export const SANDBOX_FOLLOW_UP_REASONS = {
  invalidAmount: 'Invalid amount.',
  unknownCurrency: 'Unknown currency.',
  unknownAuthorization: 'Unknown authorization.',
  notApproved: 'The authorization was not approved.',
  currencyMismatch: 'The currency differs from the authorization.',
  capturedAtAuthorization: 'The payment was captured when it was authorized.',
  alreadyCaptured: 'The authorization was already captured.',
  released: 'The authorization was released.',
  captureTooBig: 'Capture amount exceeds the authorized amount.',
  notCaptured: 'Nothing was captured.',
  voided: 'The payment was voided.',
  reversed: 'The payment was reversed.',
  refunded: 'The payment has refunds.',
  refundTooBig: 'Refund exceeds the captured amount not yet refunded.',
  chargedBack: 'The payment was charged back.',
} as const;

export const validAmount = (amountMinor: number) => Number.isSafeInteger(amountMinor) && amountMinor > 0;

/** What the sandbox keeps of a card it is given: the first six and last four digits and the expiry. */
export const cardFactsOf = (card: Pick<ValidCard, 'pan' | 'expMonth' | 'expYear'>): CardFacts => ({
  mask: `${card.pan.slice(0, 6)}****${card.pan.slice(-4)}`,
  expMonth: card.expMonth,
  expYear: card.expYear,
});

export type ChallengeFlow = '3ds' | 'redirect';

export type AuthorizationDecision =
  | { readonly kind: 'approve' }
  | { readonly kind: 'decline'; readonly reason: string; readonly soft?: boolean }
  /** The customer must confirm first; `then` is what a confirmation does. */
  | { readonly kind: 'challenge'; readonly flow: ChallengeFlow; readonly then: 'approve' | 'decline' }
  /** Approved, but the answer is lost on the way: the caller hears nothing, asking again gets the approval. */
  | { readonly kind: 'no-answer' };

export interface AuthorizationAsk {
  readonly amountMinor: number;
  readonly currency: string;
  /** A merchant-initiated charge on a stored card. */
  readonly recurringOnStored: boolean;
  readonly attempt: number;
  /**
   * A wallet token's card number (docs/sandbox.md, "Wallet tokens"): a device's with a cryptogram
   * (`dpan`) was authenticated on the device, so the test card's 3-D Secure challenge is skipped and
   * its outcome given at once (05/38 approved, 06/38 declined by processing); the card's own (`fpan`, Google Pay PAN_ONLY) is challenged as the card is.
   */
  readonly walletPan?: 'dpan' | 'fpan';
}

/** A first authorization; `card` is undefined for a stored credential the sandbox does not know. */
export function decideAuthorization(ask: AuthorizationAsk, card: CardFacts | undefined): AuthorizationDecision {
  const R = SANDBOX_FOLLOW_UP_REASONS;
  if (!validAmount(ask.amountMinor)) return { kind: 'decline', reason: R.invalidAmount };
  if (!isKnownCurrency(ask.currency)) return { kind: 'decline', reason: R.unknownCurrency };
  if (!card) return { kind: 'decline', reason: SANDBOX_REASONS.recurringUnavailable };
  if (ask.recurringOnStored) {
    const plan = planRecurring(card, ask.amountMinor, ask.attempt);
    return plan.kind === 'approve' ? plan : { kind: 'decline', reason: plan.reason, ...(plan.soft ? { soft: true } : {}) };
  }
  const plan = planAuthorization(card);
  if (plan.kind === 'challenge' && plan.flow === '3ds' && ask.walletPan === 'dpan') {
    return plan.then === 'approve' ? { kind: 'approve' } : { kind: 'decline', reason: SANDBOX_REASONS.declined };
  }
  return plan.kind === 'no-answer' ? { kind: 'no-answer' } : plan;
}

/**
 * What must still hold of the authorization's balances when a follow-up is written, besides that it
 * is the approved authorization named and neither voided nor reversed: captured exactly
 * `capturedMinor`, and refunded at most `refundedAtMostMinor` when given.
 */
export interface BalanceGuard {
  readonly capturedMinor: number;
  readonly refundedAtMostMinor?: number;
}

/** How a follow-up changes the authorization's balances. */
export type BalanceChange =
  | { readonly kind: 'capture'; readonly amountMinor: number }
  /** An addition: concurrent refunds all pass while together they fit, and no more. */
  | { readonly kind: 'refund'; readonly amountMinor: number }
  | { readonly kind: 'void' }
  | { readonly kind: 'reverse' };

export type FollowUpDecision = { readonly refused: string } | { readonly amountMinor: number; readonly guard: BalanceGuard; readonly change: BalanceChange };

/** Authorized with capture (sale, recurring) or for a later capture (auth). */
const capturesLater = (auth: LedgerEntry) => (auth.capture === undefined ? auth.operation === 'auth' : !auth.capture);

/**
 * The bank's decision on a capture, refund, void or reversal, from the authorization as read: a
 * refusal (the money rules, the test cards' triggers), or the amount it moves, the guard that must
 * still hold when it is written and the change of the balances.
 */
export function decideFollowUp(kind: SandboxFollowUp, auth: LedgerEntry | undefined, request: Pick<FollowUpRequest, 'authorization' | 'amountMinor' | 'currency'>): FollowUpDecision {
  const R = SANDBOX_FOLLOW_UP_REASONS;
  if (!auth || auth.acquirerRef !== request.authorization.acquirerRef || !['sale', 'auth', 'recurring'].includes(auth.operation)) return { refused: R.unknownAuthorization };
  if (auth.status !== 'approved') return { refused: R.notApproved };
  if (request.currency !== auth.currency) return { refused: R.currencyMismatch };
  if ((kind === 'capture' || kind === 'refund') && !validAmount(request.amountMinor)) return { refused: R.invalidAmount };
  if (kind !== 'reversal') {
    const trigger = planFollowUp(kind, auth.card);
    if (trigger.kind === 'decline') return { refused: trigger.reason };
  }
  const captured = auth.capturedMinor ?? 0;
  const refunded = auth.refundedMinor ?? 0;
  const later = capturesLater(auth);
  if (auth.voided) return { refused: R.voided };
  // Like the S2S CARD gateway (208005): a payment charged back takes no refund, void or reversal.
  if ((auth.chargedBackMinor ?? 0) > 0) return { refused: R.chargedBack };
  if (auth.reversed) return { refused: later && captured === 0 ? R.released : R.reversed };
  switch (kind) {
    case 'capture':
      if (!later) return { refused: R.capturedAtAuthorization };
      if (captured > 0) return { refused: R.alreadyCaptured };
      if (request.amountMinor > auth.amountMinor) return { refused: R.captureTooBig };
      return { amountMinor: request.amountMinor, guard: { capturedMinor: 0 }, change: { kind: 'capture', amountMinor: request.amountMinor } };
    case 'void':
      // A void gives back everything captured, whatever amount it was asked for.
      if (captured === 0) return { refused: R.notCaptured };
      if (refunded > 0) return { refused: R.refunded };
      return { amountMinor: captured, guard: { capturedMinor: captured, refundedAtMostMinor: 0 }, change: { kind: 'void' } };
    case 'refund':
      if (captured === 0) return { refused: R.notCaptured };
      if (refunded + request.amountMinor > captured) return { refused: R.refundTooBig };
      return { amountMinor: request.amountMinor, guard: { capturedMinor: captured, refundedAtMostMinor: captured - request.amountMinor }, change: { kind: 'refund', amountMinor: request.amountMinor } };
    case 'reversal':
      // The release of an uncaptured authorization (all of it), or the reversal of a whole sale
      // while nothing of it was given back.
      if (later && captured > 0) return { refused: R.alreadyCaptured };
      if (!later && refunded > 0) return { refused: R.refunded };
      return { amountMinor: later ? auth.amountMinor : captured, guard: { capturedMinor: captured, refundedAtMostMinor: 0 }, change: { kind: 'reverse' } };
  }
}

/** The guard as a predicate on an authorization: the ledger store's write condition says the same. */
export function guardHolds(guard: BalanceGuard, auth: LedgerEntry | undefined, authorizationRef: string): boolean {
  if (!auth || auth.status !== 'approved' || auth.acquirerRef !== authorizationRef || auth.voided || auth.reversed) return false;
  if ((auth.capturedMinor ?? 0) !== guard.capturedMinor || (auth.chargedBackMinor ?? 0) > 0) return false;
  return guard.refundedAtMostMinor === undefined || (auth.refundedMinor ?? 0) <= guard.refundedAtMostMinor;
}

/** The authorization's balances after a change the guard allowed. */
export function applyChange(auth: LedgerEntry, change: BalanceChange): LedgerEntry {
  switch (change.kind) {
    case 'capture':
      return { ...auth, capturedMinor: change.amountMinor };
    case 'refund':
      return { ...auth, refundedMinor: (auth.refundedMinor ?? 0) + change.amountMinor };
    case 'void':
      return { ...auth, voided: true };
    case 'reverse':
      return { ...auth, reversed: true };
  }
}

export type ChallengeVerdict =
  /** A mistyped one-time code: asked again, as issuers do, until the tries are used. */
  | { readonly kind: 'retry'; readonly wrongCodes: number; readonly codeTriesLeft: number }
  | { readonly kind: 'approve' }
  | { readonly kind: 'decline'; readonly reason: string };

/**
 * The customer's answer to a challenge still pending. A 3-D Secure challenge passes with the
 * sandbox code on a card that passes; a redirect passes when confirmed; only the last allowed wrong
 * code declines.
 */
export function judgeChallengeAnswer(pending: NonNullable<LedgerEntry['pending']>, answer: { readonly code?: string; readonly confirm: boolean }): ChallengeVerdict {
  const wrongCodes = pending.wrongCodes ?? 0;
  if (answer.confirm && pending.flow === '3ds' && answer.code !== SANDBOX_OTP && wrongCodes + 1 < SANDBOX_CODE_TRIES) {
    return { kind: 'retry', wrongCodes: wrongCodes + 1, codeTriesLeft: SANDBOX_CODE_TRIES - wrongCodes - 1 };
  }
  const passed = answer.confirm && pending.then === 'approve' && (pending.flow === 'redirect' || answer.code === SANDBOX_OTP);
  if (passed) return { kind: 'approve' };
  return { kind: 'decline', reason: pending.flow === '3ds' ? SANDBOX_REASONS.threeDsFailed : SANDBOX_REASONS.redirectFailed };
}

/** Why the sandbox cannot raise a chargeback: the platform's codes (lambdas/domain/errors.ts). */
export type ChargebackRefusal = 'CHARGEBACK_NOT_SETTLED' | 'CHARGEBACK_AMOUNT_TOO_BIG';

/** What a chargeback must find still true of the authorization's balances when it is written. */
export interface ChargebackGuard {
  readonly capturedMinor: number;
  readonly refundedMinor: number;
  readonly chargedBackMinor: number;
}

/**
 * A chargeback of an authorization as read: of captured money only, at most what is left after
 * refunds and earlier chargebacks (all of it when no amount is given).
 */
export function decideChargeback(auth: LedgerEntry | undefined, amountMinor: number | undefined): { readonly refused: ChargebackRefusal } | { readonly amountMinor: number; readonly guard: ChargebackGuard } {
  if (!auth || auth.status !== 'approved' || auth.voided || auth.reversed) return { refused: 'CHARGEBACK_NOT_SETTLED' };
  const captured = auth.capturedMinor ?? 0;
  const refunded = auth.refundedMinor ?? 0;
  const chargedBack = auth.chargedBackMinor ?? 0;
  const left = captured - refunded - chargedBack;
  // Nothing captured, or all of it refunded: the payment is not the settled money a chargeback takes.
  if (captured === 0 || refunded >= captured) return { refused: 'CHARGEBACK_NOT_SETTLED' };
  const amount = amountMinor ?? left;
  if (!validAmount(amount) || amount > left) return { refused: 'CHARGEBACK_AMOUNT_TOO_BIG' };
  return { amountMinor: amount, guard: { capturedMinor: captured, refundedMinor: refunded, chargedBackMinor: chargedBack } };
}
